import { describe, expect, it } from 'vitest';
import { compileRequestValidator, endpoints } from '../src/index.ts';
import { UserSubscription } from '../src/schemas/index.ts';
import { appliesTo, requestSchemas, without } from './request-schemas.ts';
import { DEFAULTS, ENUMS, IMAGE_PRODUCING_PATHS, NON_IMAGE_PATHS, PLANS } from './spec-tables.ts';

const enumCases = requestSchemas.flatMap((request) =>
  ENUMS.filter((row) => request.schema.properties[row.field] && appliesTo(row, request.name)).map((row) => ({
    request,
    row,
  })),
);

const wrap = (each: boolean | undefined, value: unknown) => (each ? [value] : value);

describe("the API reference's enumerations", () => {
  it('covers every enumeration row in at least one schema', () => {
    for (const row of ENUMS)
      expect(
        enumCases.some((c) => c.row === row),
        row.field,
      ).toBe(true);
  });

  it.each(enumCases.map((c) => [c.request.name, c.row.field, c]))(
    '%s.%s accepts every member and rejects a non-member with every member named',
    (_name, field, { request, row }) => {
      for (const member of row.members) {
        expect(
          request.validate({ ...request.example, [field]: wrap(row.each, member) }),
          member,
        ).toMatchObject({
          ok: true,
        });
      }
      const result = request.validate({ ...request.example, [field]: wrap(row.each, 'NotAMember') });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.detail[0]).toEqual({
        loc: row.each ? ['body', field, 0] : ['body', field],
        msg: `value is not a valid enumeration member; permitted: ${row.members.map((m) => `'${m}'`).join(', ')}`,
        type: 'type_error.enum',
        ctx: { enum_values: [...row.members] },
      });
    },
  );

  it.each(enumCases.filter((c) => c.row.hash).map((c) => [c.request.name, c.row.field, c]))(
    '%s.%s also accepts the hash of an uploaded model',
    (_name, field, { request, row }) => {
      const body = { ...request.example, [field]: wrap(row.each, '3f2a9c1e44b0') };
      expect(request.validate(body)).toMatchObject({ ok: true });
    },
  );

  it('lists every plan on the subscription record', () => {
    expect((UserSubscription.properties.plan as unknown as { enum: string[] }).enum).toEqual(PLANS);
  });
});

const defaultCases = requestSchemas.flatMap((request) =>
  DEFAULTS.filter((row) => request.schema.properties[row.field] && appliesTo(row, request.name)).map(
    (row) => ({
      request,
      row,
    }),
  ),
);

describe("the API reference's defaults", () => {
  it('covers every default row in at least one schema', () => {
    for (const row of DEFAULTS)
      expect(
        defaultCases.some((c) => c.row === row),
        row.field,
      ).toBe(true);
  });

  it.each(defaultCases.map((c) => [c.request.name, c.row.field, JSON.stringify(c.row.value), c]))(
    '%s fills %s with %s when it is left out',
    (_name, field, _value, { request, row }) => {
      expect(request.schema.required ?? []).not.toContain(field);
      const result = request.validate(without(request.example, field));
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.value[field]).toEqual(row.value);
    },
  );

  it('documents the chosen scheduler reading in the schema', () => {
    for (const request of requestSchemas) {
      const scheduler = request.schema.properties.scheduler;
      if (!scheduler) continue;
      expect(scheduler.description, request.name).toMatch(/two readings/);
    }
  });
});

describe('safety_checker on every image-producing endpoint', () => {
  const endpointAt = (path: string) => {
    const found = endpoints.find((e) => e.path === path && e.method === 'POST');
    if (!found) throw new Error(`no POST ${path}`);
    return found;
  };

  it('classes every POST endpoint with a request body as image-producing or not', () => {
    const withBody = endpoints.filter((e) => e.method === 'POST' && (e.request || e.multipart));
    expect(withBody.map((e) => e.path).sort()).toEqual([...IMAGE_PRODUCING_PATHS, ...NON_IMAGE_PATHS].sort());
  });

  it.each(IMAGE_PRODUCING_PATHS)('%s defaults safety_checker to false and keeps true', (path) => {
    const endpoint = endpointAt(path);
    const validate = compileRequestValidator(endpoint);
    const example = without(endpoint.example as Record<string, unknown>, 'safety_checker');
    const filled = validate(structuredClone(example));
    expect(filled.ok).toBe(true);
    if (filled.ok) expect(filled.value.safety_checker).toBe(false);
    const asked = validate({ ...structuredClone(example), safety_checker: true });
    expect(asked.ok).toBe(true);
    if (asked.ok) expect(asked.value.safety_checker).toBe(true);
  });

  it.each(NON_IMAGE_PATHS)('%s has no safety_checker field', (path) => {
    const endpoint = endpointAt(path);
    const schema = (endpoint.request ?? endpoint.multipart) as { properties: Record<string, unknown> };
    expect(schema.properties).not.toHaveProperty('safety_checker');
  });
});
