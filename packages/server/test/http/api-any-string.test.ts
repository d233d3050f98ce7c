import { type Endpoint, endpoints } from '@imagegen/contract';
import { fromStored } from '@imagegen/db';
import type { Engine, EngineJob } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertServer } from '../../src/auth/sql/upsertServer.ts';
import { claimDueDeliveries } from '../../src/webhooks/sql/claimDueDeliveries.ts';
import { enqueueWebhook } from '../../src/webhooks/webhook-outbox.ts';
import {
  type ApiHarness,
  type ApiResponse,
  plainEngine,
  startApiHarness,
  withReachableImages,
} from '../support/api-harness.ts';
import {
  propertiesOf,
  type Schema,
  type StringSlot,
  stringSlots,
  withSlot,
} from '../support/request-bodies.ts';

/**
 * A string is a string: the original service takes any JSON string in a text field, U+0000 and
 * lone surrogates included, which PostgreSQL cannot hold as they are. Every place of every request
 * schema that takes a string (found by walking the contract's schemas) gets each awkward string
 * below. No answer is a 5xx; every free-text and URL place accepts them all; and what the API
 * accepted comes back exactly as it was sent wherever it is read again: the task's stored input,
 * the input the engine runs, the image records, the model records, the batch, the server the task
 * was routed to, and the webhook delivery's URL.
 */

const AWKWARD = [
  'a\u0000b',
  '\ud800x',
  'x\udfff',
  '\udc00\ud800',
  '\uffff',
  '😀 astral',
  '\u0000a\u0000',
  // The storage encoding's own escape character, and what its escapes look like.
  '\ufdd0u0000\ufdd00',
];

/** Every JSON POST path, with the places its schema takes a string. */
const TARGETS = endpoints
  .filter((endpoint) => endpoint.method === 'POST' && endpoint.request)
  .map((endpoint) => ({
    endpoint,
    schema: endpoint.request as Schema,
    slots: stringSlots(endpoint.request as Schema),
  }));

/**
 * The value a slot gets: the string itself, or for a URL a working address of the harness's
 * photo with the string in its query (the image server ignores queries, so inputs still fetch).
 * The path is in the URL too, so that each webhook delivery names its task. Whitespace becomes
 * `+` there: a URL ends at whitespace (pydantic answers `value_error.url.extra` for the rest).
 */
function valueFor(slot: StringSlot, text: string, api: ApiHarness, path: string): string {
  return slot.kind === 'url' ? `${api.imagesUrl}/photo.png?for=${path}&q=${text.replace(/\s/gu, '+')}` : text;
}

/**
 * Makes every string place of the contract reachable for the enterprise account: a server for
 * each awkward string (so `server_id` routes), and a model of its own (so `/sync_model/v1` finds
 * its `model_id`). Answers the example bodies to start from.
 */
async function prepare(api: ApiHarness): Promise<Map<Endpoint, Record<string, unknown>>> {
  for (const text of AWKWARD) await upsertServer(api.db.pool, { id: text, ownerId: api.enterprise.ownerId });
  const key = api.enterprise.key;
  const photo = `${api.imagesUrl}/photo.png`;
  const load = endpoints.find((endpoint) => endpoint.path === '/load_model/v1')!;
  const loaded = await api.request('POST', load.path, {
    key,
    json: withReachableImages(load.example, photo),
  });
  expect(loaded.status).toBe(200);
  const models = await api.request('GET', '/models/v1', { key });
  const modelId = (models.body as { model_id: string }[])[0]!.model_id;
  const examples = new Map<Endpoint, Record<string, unknown>>();
  for (const { endpoint } of TARGETS) {
    const example = withReachableImages(endpoint.example, photo) as Record<string, unknown>;
    examples.set(endpoint, endpoint.path === '/sync_model/v1' ? { ...example, model_id: modelId } : example);
  }
  return examples;
}

type Accepted = Map<string, Set<StringSlot>>;
const key = (path: string, text: string) => `${path}\u0001${text}`;

describe('any string, in every string field', () => {
  /** For each path and awkward string: the slots where the API accepted it (phase 1). */
  const accepted: Accepted = new Map();

  it('finds the string fields by walking the contract, list items and union branches included', () => {
    const count = TARGETS.reduce((sum, target) => sum + target.slots.length, 0);
    expect(count).toBeGreaterThan(300);
    const t2i = TARGETS.find((target) => target.endpoint.path === '/sd/text2image/v1')!.slots;
    expect(t2i).toContainEqual({ field: 'prompt', item: false, kind: 'text' });
    expect(t2i).toContainEqual({ field: 'lora_models', item: true, kind: 'text' });
    expect(t2i).toContainEqual({ field: 'ip_adapter', item: true, kind: 'pattern' });
    expect(t2i).toContainEqual({ field: 'webhook', item: false, kind: 'url' });
  });

  it('answers every string in every string field without a 5xx, and takes it in every free-text and URL field', {
    timeout: 180_000,
  }, async () => {
    const api = await startApiHarness({ withWorkers: false });
    try {
      const examples = await prepare(api);
      const failures: string[] = [];
      const refused = new Set<string>();
      for (const { endpoint, slots } of TARGETS) {
        for (const slot of slots) {
          const send = (text: string) => {
            const body = withSlot(examples.get(endpoint)!, slot, valueFor(slot, text, api, endpoint.path));
            return api.request('POST', endpoint.path, { key: api.enterprise.key, json: body });
          };
          const responses = await Promise.all(AWKWARD.map(send));
          for (const [n, text] of AWKWARD.entries()) {
            const response = responses[n]!;
            const where = `${endpoint.path} ${slot.field}`;
            if (response.status >= 500) failures.push(`${where} ${JSON.stringify(text)}: ${response.status}`);
            if (response.status === 200) {
              const at = accepted.get(key(endpoint.path, text)) ?? new Set();
              accepted.set(key(endpoint.path, text), at.add(slot));
            } else if (slot.kind === 'text' || slot.kind === 'url') {
              refused.add(`${where}: ${response.status}`);
            }
          }
        }
      }
      expect(failures).toEqual([]);
      // Enumerations and patterns refuse them with a 422, and a model id that no model has is not
      // found; every other string place takes any string.
      expect([...refused]).toEqual(['/sync_model/v1 model_id: 404']);
    } finally {
      await api.close();
    }
  });

  describe('and gives it back unchanged', () => {
    let api: ApiHarness;
    let examples: Map<Endpoint, Record<string, unknown>>;
    const seen: EngineJob[] = [];
    const engined = new Set<string>();

    beforeAll(async () => {
      const plain = plainEngine();
      for (const pipeline of plain.pipelines) engined.add(pipeline);
      const recording: Engine = {
        ...plain,
        name: 'recording',
        run: (job, ctx) => {
          seen.push(job);
          return plain.run(job, ctx);
        },
      };
      api = await startApiHarness({ engine: recording, worker: { enqueueWebhook } });
      examples = await prepare(api);
    });
    afterAll(() => api.close());

    it('wherever it is read again', { timeout: 180_000 }, async () => {
      const owner = api.enterprise.key;
      const submitted: { path: string; body: Record<string, unknown>; slots: StringSlot[]; id: string }[] =
        [];
      const statuses = new Map<string, Record<string, unknown>>();
      // One round per string, with a worker serving the server of that name: a task routed to it
      // is run only there. (One worker at a time: each holds a database connection.)
      for (const text of AWKWARD) {
        const round = new AbortController();
        api.addWorker({ serverId: text, signal: round.signal });
        const tasks: typeof submitted = [];
        for (const { endpoint, schema } of TARGETS) {
          const slots = [...(accepted.get(key(endpoint.path, text)) ?? [])];
          if (slots.length === 0) continue;
          let body = examples.get(endpoint)!;
          for (const slot of slots) body = withSlot(body, slot, valueFor(slot, text, api, endpoint.path));
          // Small pictures keep the run quick; sizes are not what this test is about.
          const properties = propertiesOf(schema);
          for (const size of ['width', 'height']) if (size in properties) body[size] = 64;
          if ('samples' in properties) body.samples = 1;
          const response = await api.request('POST', endpoint.path, { key: owner, json: body });
          expect(response.status, `${endpoint.path} ${JSON.stringify(body)}`).toBe(200);
          tasks.push({ path: endpoint.path, body, slots, id: (response.body as { id: string }).id });
        }
        const settled = await Promise.all(
          tasks.map((task) => api.settle(`${task.path}/status/${task.id}`, owner)),
        );
        for (const [n, task] of tasks.entries()) {
          const status = settled[n]!;
          expect(['SUCCESS', 'completed'], `${task.path}: ${JSON.stringify(status)}`).toContain(
            status.status,
          );
          statuses.set(task.id, status);
        }
        round.abort();
        submitted.push(...tasks);
      }
      expect(submitted.length).toBe(TARGETS.length * AWKWARD.length);
      const images = (await allImages(api, owner)).map((image) => image.body as ImageRecord);
      const deliveries = await claimDueDeliveries(api.db.pool, { limit: 10_000, leaseMs: 60_000 });

      /** Where each sent field was read back, by `path field`. */
      const readBack = new Map<string, Set<string>>();
      const saw = (task: { path: string }, field: string, where: string) =>
        readBack.set(
          `${task.path} ${field}`,
          (readBack.get(`${task.path} ${field}`) ?? new Set()).add(where),
        );

      for (const task of submitted) {
        const status = statuses.get(task.id)!;
        const sent = Object.fromEntries(task.slots.map((slot) => [slot.field, task.body[slot.field]]));

        // The task's stored input holds every string exactly.
        const stored = await api.db.pool.query('SELECT input FROM tasks WHERE id = $1', [task.id]);
        const input = fromStored(stored.rows[0].input) as Record<string, unknown>;
        for (const [field, value] of Object.entries(sent))
          expect(input[field], `${task.path} ${field}`).toEqual(value);

        // The engine ran the request as it was sent.
        if (engined.has(task.path)) {
          const job = seen.find((each) => each.pipeline === task.path && holds(each.input, sent));
          expect(job, `${task.path}: no engine run saw ${JSON.stringify(sent)}`).toBeDefined();
          for (const field of Object.keys(sent)) saw(task, field, 'engine');
        }

        // A task routed to a server ran there: the worker serving that very string claimed it.
        if (typeof sent.server_id === 'string') saw(task, 'server_id', 'server');

        // The image records of a generation carry the request in their json (JSON text).
        if (Array.isArray(status.download_urls)) {
          const links = status.download_urls as string[];
          const record = images.find(
            (image) => links.includes(image.download_url) && holds(JSON.parse(image.json), sent),
          );
          expect(record, `${task.path}: no image record holds ${JSON.stringify(sent)}`).toBeDefined();
          for (const field of Object.keys(sent)) saw(task, field, 'image record');
        }

        // A loaded or trained model's record holds the strings it was given.
        if (typeof status.model_id === 'string' && task.path !== '/sync_model/v1') {
          const model = await api.request('GET', `/models/v1/${encodeURIComponent(status.model_id)}`, {
            key: owner,
          });
          expect(model.status).toBe(200);
          const record = model.body as Record<string, unknown>;
          const kept = Object.entries(sent).filter(([field]) => field in record);
          expect(kept.length, `${task.path}: no string reached the model`).toBeGreaterThan(0);
          for (const [field, value] of kept) {
            expect(record[field], field).toEqual(value);
            saw(task, field, 'model record');
          }
        }

        // The batch is found by its id, and answers it back. (A URL path is UTF-8, which has no
        // lone surrogates: such a batch id cannot be asked for, of this API or of any other.)
        const batchId = sent.batch_id;
        if (typeof batchId === 'string' && Buffer.from(batchId).toString() === batchId) {
          const batch = await api.request('GET', `/batches/v1/${encodeURIComponent(batchId)}`, {
            key: owner,
          });
          expect(batch.status, `batch ${JSON.stringify(batchId)}`).toBe(200);
          const listed = batch.body as { batch_id: string; tasks: { id: string }[] };
          expect(listed.batch_id).toBe(batchId);
          expect(listed.tasks.map((each) => each.id)).toContain(task.id);
          saw(task, 'batch_id', 'batch');
        }

        // The webhook delivery goes to the URL as it was sent, carrying the status body, the task's id and path.
        if (typeof sent.webhook === 'string') {
          const delivery = deliveries.find((each) => each.url === sent.webhook);
          expect(delivery, `${task.path}: no delivery to ${JSON.stringify(sent.webhook)}`).toBeDefined();
          expect(JSON.parse(delivery!.payload)).toEqual({ ...status, id: task.id, path: task.path });
          saw(task, 'webhook', 'webhook');
        }
      }

      // Every field that took a string was read back through the API, an engine, a route or a
      // webhook, not only from the table.
      const fields = new Set(
        submitted.flatMap((task) => task.slots.map((slot) => `${task.path} ${slot.field}`)),
      );
      expect([...fields].filter((field) => !readBack.has(field))).toEqual([]);
    });

    it('answers lone surrogates as \\u escapes, as Python json.dumps writes them', async () => {
      const records = await allImages(api, api.enterprise.key);
      // The request in each record is JSON text itself: its escapes are in that text.
      const raw = records.map((record) => (record.body as ImageRecord).json).join('\n');
      expect(raw).toContain('\\ud800x');
      expect(raw).toContain('x\\udfff');
      expect(raw).toContain('a\\u0000b');
      // A lone surrogate written as UTF-8 would have become U+FFFD (EF BF BD) on the way.
      expect(records.every((record) => !record.bytes.includes(Buffer.from([0xef, 0xbf, 0xbd])))).toBe(true);
    });
  });
});

/** Whether `input` holds every field of `sent` with an equal value. */
function holds(input: unknown, sent: Record<string, unknown>): boolean {
  const record = input as Record<string, unknown>;
  return Object.entries(sent).every(
    ([field, value]) => JSON.stringify(record[field]) === JSON.stringify(value),
  );
}

interface ImageRecord {
  download_url: string;
  json: string;
}

/** Every image record of the owner, read through the API: the pages of the listing, then each record. */
async function allImages(api: ApiHarness, owner: string): Promise<ApiResponse[]> {
  const records: ApiResponse[] = [];
  for (let before = ''; ; ) {
    const listing = await api.request('GET', `/images/v1?limit=100${before && `&before=${before}`}`, {
      key: owner,
    });
    expect(listing.status).toBe(200);
    const ids = (listing.body as { image_id: string }[]).map((image) => image.image_id);
    if (ids.length === 0) return records;
    const page = await Promise.all(ids.map((id) => api.request('GET', `/images/v1/${id}`, { key: owner })));
    records.push(...page);
    before = ids[ids.length - 1]!;
  }
}
