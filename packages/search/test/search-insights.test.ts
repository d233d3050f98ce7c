import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInsightsStore } from '../src/insights.ts';
import type { DocSearchRecord } from '../src/records.ts';
import { listSearchEvents } from '../src/sql/listSearchEvents.ts';
import {
  builtDocsRecords,
  docSearchRequest,
  type RunningService,
  startService,
} from './support/built-docs.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

describe('search insights (POST /1/events)', () => {
  let db: TestDatabase;
  let service: RunningService;
  let records: DocSearchRecord[];
  beforeAll(async () => {
    db = await createTestDatabase();
    records = await builtDocsRecords();
    service = await startService({ records, insights: createInsightsStore(db.pool) });
  });
  afterAll(async () => {
    await service.close();
    await db.drop();
  });

  const search = async (query: string) => {
    const response = await service.post('/1/indexes/*/queries', docSearchRequest(query));
    const { results } = (await response.json()) as {
      results: { queryID: string; hits: { objectID: string }[] }[];
    };
    return results[0]!;
  };

  it('stores view, click and conversion events tied to the search that showed the hits', async () => {
    const result = await search('relight');
    const shown = result.hits.slice(0, 3).map((hit) => hit.objectID);
    const base = { index: 'docs', userToken: 'anonymous-0f3a' };
    const response = await service.post('/1/events', {
      events: [
        { ...base, eventType: 'view', eventName: 'Hits Viewed', objectIDs: shown },
        {
          ...base,
          eventType: 'click',
          eventName: 'Item Selected',
          queryID: result.queryID,
          objectIDs: [shown[1]],
          positions: [2],
        },
        {
          ...base,
          eventType: 'conversion',
          eventName: 'Item Saved',
          queryID: result.queryID,
          objectIDs: [shown[1]],
        },
      ],
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 200, message: 'OK' });

    const stored = (await listSearchEvents(db.pool, 3)).reverse();
    expect(stored.map((e) => e.event_type)).toEqual(['view', 'click', 'conversion']);
    expect(stored[0]).toMatchObject({
      event_name: 'Hits Viewed',
      index_name: 'docs',
      user_token: 'anonymous-0f3a',
    });
    expect(stored[0]!.object_ids).toEqual(shown);
    expect(stored[1]).toMatchObject({ query_id: result.queryID, object_ids: [shown[1]], positions: [2] });
    expect(stored[2]).toMatchObject({ query_id: result.queryID, positions: null });
  });

  it('stores any objectID as it was sent, U+0000 and lone surrogates included', async () => {
    const objectIDs = ['a\u0000b', '\ud800', 'x\udfff', '\ufdd0u0000'];
    const event = {
      eventType: 'view',
      eventName: 'Hits Viewed',
      index: 'docs',
      userToken: 'u-any',
      objectIDs,
    };
    const response = await service.post('/1/events', { events: [event] });
    expect(response.status).toBe(200);
    const [stored] = await listSearchEvents(db.pool, 1);
    expect(stored).toMatchObject({ user_token: 'u-any', object_ids: objectIDs });
  });

  it('refuses events Algolia would refuse, with 422 and a message naming the field, storing none', async () => {
    const before = (await listSearchEvents(db.pool, 1000)).length;
    const good = {
      eventType: 'click',
      eventName: 'Item Selected',
      index: 'docs',
      userToken: 'u1',
      objectIDs: ['a'],
    };
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ...good, eventType: 'purchase' }, /eventType/],
      [{ ...good, eventName: '' }, /eventName/],
      [{ ...good, index: 'other' }, /index/],
      [{ ...good, userToken: 'has spaces' }, /userToken/],
      [{ ...good, objectIDs: [] }, /objectIDs/],
      [{ ...good, objectIDs: Array.from({ length: 21 }, (_, i) => `o${i}`) }, /objectIDs/],
      [{ ...good, queryID: 'not-hex' }, /queryID/],
      [{ ...good, queryID: 'a'.repeat(32) }, /positions is required/],
      [{ ...good, queryID: 'a'.repeat(32), positions: [1, 2] }, /positions/],
      [{ ...good, timestamp: Date.now() - 5 * 24 * 3600 * 1000 }, /timestamp/],
    ];
    for (const [event, message] of bad) {
      const response = await service.post('/1/events', { events: [good, event] });
      expect(response.status, JSON.stringify(event)).toBe(422);
      const body = (await response.json()) as { status: number; message: string };
      expect(body.status).toBe(422);
      expect(body.message).toMatch(message);
    }
    const empty = await service.post('/1/events', { events: [] });
    expect(empty.status).toBe(422);
    const shapeless = await service.post('/1/events', { event: good });
    expect(shapeless.status).toBe(400);
    expect((await listSearchEvents(db.pool, 1000)).length).toBe(before);
  });

  it('refuses events without the search-only credentials', async () => {
    const response = await service.post(
      '/1/events',
      { events: [{ eventType: 'view', eventName: 'v', index: 'docs', userToken: 'u', objectIDs: ['a'] }] },
      { auth: false },
    );
    expect(response.status).toBe(403);
  });

  it('answers 503 where no insights storage is configured', async () => {
    const bare = await startService({ records: records.slice(0, 10) });
    try {
      const response = await bare.post('/1/events', {
        events: [{ eventType: 'view', eventName: 'v', index: 'docs', userToken: 'u', objectIDs: ['a'] }],
      });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ message: 'Insights storage is not configured', status: 503 });
    } finally {
      await bare.close();
    }
  });
});
