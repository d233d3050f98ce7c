import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractValidatorCompiler } from '../../src/http/contract-validation.ts';
import { installErrorHandlers } from '../../src/http/http-errors.ts';

/**
 * The validator hook on its own, with schemas the API's endpoint table does not have (an integer
 * path parameter): every part of a request is validated, located and answered the same way.
 */
describe("Fastify's validator hook running the contract's validators", () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = Fastify();
    installErrorHandlers(app, { json: 1024, image: 1024 });
    app.setValidatorCompiler(contractValidatorCompiler);
    const params = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };
    const querystring = {
      type: 'object',
      properties: { size: { type: 'integer', maximum: 10, default: 5 }, colour: { type: 'string' } },
    };
    const body = {
      type: 'object',
      properties: { name: { type: 'string' }, count: { type: 'integer', default: 1 } },
      required: ['name'],
    };
    app.get('/things/:n', { schema: { params, querystring } }, (request) => ({
      params: request.params,
      query: request.query,
    }));
    app.post('/things', { schema: { body } }, (request) => request.body);
    await app.ready();
  });
  afterAll(() => app.close());

  it('answers a path parameter out of its bounds with a 422 located at ["path", name]', async () => {
    const response = await app.inject({ method: 'GET', url: '/things/0' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      detail: [
        {
          loc: ['path', 'n'],
          msg: 'ensure this value is greater than or equal to 1',
          type: 'value_error.number.not_ge',
          ctx: { limit_value: 1 },
        },
      ],
    });
    const text = await app.inject({ method: 'GET', url: '/things/abc' });
    expect(text.json()).toEqual({
      detail: [{ loc: ['path', 'n'], msg: 'value is not a valid integer', type: 'type_error.integer' }],
    });
  });

  it('answers a query value out of its bounds with a 422 located at ["query", name]', async () => {
    const response = await app.inject({ method: 'GET', url: '/things/3?size=11' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({
      detail: [{ loc: ['query', 'size'], type: 'value_error.number.not_le' }],
    });
  });

  it('hands the handler numbers read from text, defaults filled and unknown parameters dropped', async () => {
    const response = await app.inject({ method: 'GET', url: '/things/3?colour=red&other=x' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ params: { n: 3 }, query: { size: 5, colour: 'red' } });
  });

  it('answers a body without a required field with a 422 located at ["body", name]', async () => {
    const response = await app.inject({ method: 'POST', url: '/things', payload: { count: 2 } });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      detail: [{ loc: ['body', 'name'], msg: 'field required', type: 'value_error.missing' }],
    });
  });

  it('hands the handler the body with defaults filled and unknown fields dropped', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/things',
      payload: { name: 'a', extra: true },
    });
    expect(response.json()).toEqual({ name: 'a', count: 1 });
  });

  it('refuses to register a schema for a part the contract does not describe (headers)', async () => {
    const other = Fastify();
    other.setValidatorCompiler(contractValidatorCompiler);
    other.get('/h', { schema: { headers: { type: 'object' } } }, () => 'x');
    await expect(other.ready()).rejects.toThrow('the contract describes no headers schema');
    await other.close();
  });
});
