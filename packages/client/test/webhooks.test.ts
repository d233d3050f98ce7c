import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook, startWebhookDispatcher } from '@imagegen/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, verifyWebhook, WebhookVerificationError } from '../src/index.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/**
 * verifyWebhook against what the server really sends: a delivery of the real dispatcher, signed
 * with the owner's secret, verifies; the same delivery with its body changed, signed too long ago,
 * or checked with another secret does not.
 */

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

let api: TestApi;
let receiver: Server;
let receiverUrl: string;
let secret: string;
const deliveries: Delivery[] = [];
const stopDispatcher = new AbortController();
let dispatcher: { stopped: Promise<void> };

beforeAll(async () => {
  api = await startTestApi({ webhooks: true });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  dispatcher = startWebhookDispatcher({
    pool: api.db.pool,
    signal: stopDispatcher.signal,
    allowPrivate: true,
    pollMs: 50,
  });
  const client = createClient({ apiKey: api.key, baseUrl: api.url });
  secret = (await client.get('/webhook_secret/v1')).secret;
});

afterAll(async () => {
  stopDispatcher.abort();
  await dispatcher?.stopped;
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await api?.close();
});

async function delivered(): Promise<Delivery> {
  for (let wait = 0; wait < 200 && deliveries.length === 0; wait++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const delivery = deliveries.shift();
  if (!delivery) throw new Error('no webhook arrived in 10 s');
  return delivery;
}

describe('verifyWebhook', () => {
  it('accepts a delivery of the real dispatcher and answers its body: the final status, the task id and path', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    const request = {
      prompt: 'a lighthouse',
      negative_prompt: '',
      width: 64,
      height: 64,
      webhook: receiverUrl,
    };
    const { id } = await client.submit('/sd/text2image/v1', request);
    const result = await client.wait('/sd/text2image/v1', id);
    const { headers, body } = await delivered();
    // Node's request.headers as they come, and the same as a fetch Headers (edge runtimes).
    const verified = await verifyWebhook({ secret, headers, body });
    expect(verified).toEqual({ ...result, id, path: '/sd/text2image/v1' });
    const fetchHeaders = new Headers(headers as Record<string, string>);
    expect(
      await verifyWebhook({ secret, headers: fetchHeaders, body: new TextEncoder().encode(body) }),
    ).toEqual(verified);
    // The type says so too: `path` narrows the body to that pipeline's final statuses.
    if (verified.path === '/sd/text2image/v1' && verified.status === 'SUCCESS') {
      const links: (string[] | null | undefined)[] = [verified.download_urls];
      expect(links[0]).toEqual(result.download_urls);
    }
  });

  it('refuses a body changed after signing', async () => {
    const body = JSON.stringify({ status: 'SUCCESS', download_urls: ['https://example.com/a.png'] });
    const headers = signWebhook(secret, 'msg_1', new Date(), body);
    await expect(verifyWebhook({ secret, headers, body })).resolves.toMatchObject({ status: 'SUCCESS' });
    const tampered = body.replace('a.png', 'b.png');
    await expect(verifyWebhook({ secret, headers, body: tampered })).rejects.toThrow(
      /no webhook-signature matches/,
    );
  });

  it('refuses a delivery signed longer ago than the tolerance', async () => {
    const body = JSON.stringify({ status: 'FAILURE', error: 'x' });
    const signedAt = new Date(Date.now() - 10 * 60_000);
    const headers = signWebhook(secret, 'msg_2', signedAt, body);
    const error = await verifyWebhook({ secret, headers, body }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as Error).message).toMatch(/webhook-timestamp is more than 300 s away/);
    // The signature itself holds: a wider tolerance accepts it.
    await expect(verifyWebhook({ secret, headers, body, toleranceSeconds: 15 * 60 })).resolves.toEqual({
      status: 'FAILURE',
      error: 'x',
    });
  });

  it('refuses another secret, and takes any one of several signatures (a rotated secret)', async () => {
    const body = '{"status":"SUCCESS","download_urls":[]}';
    const other = `whsec_${btoa('another secret of 24 byte')}`;
    const headers = signWebhook(other, 'msg_3', new Date(), body);
    await expect(verifyWebhook({ secret, headers, body })).rejects.toThrow(WebhookVerificationError);
    const ours = signWebhook(secret, 'msg_3', new Date(), body);
    const both = {
      ...ours,
      'webhook-signature': `${headers['webhook-signature']} ${ours['webhook-signature']}`,
    };
    await expect(verifyWebhook({ secret, headers: both, body })).resolves.toEqual(JSON.parse(body));
  });

  it('refuses a request without the Standard Webhooks headers', async () => {
    await expect(verifyWebhook({ secret, headers: {}, body: '{}' })).rejects.toThrow(/missing webhook-id/);
  });
});
