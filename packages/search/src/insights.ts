/**
 * Search insights (Algolia Insights API, `POST /1/events`): view, click and conversion events
 * from the documentation site's search, validated as Algolia does and stored in PostgreSQL.
 */

import type { Queryable } from '@imagegen/db';
import { AlgoliaError } from './algolia-error.ts';
import { isObject } from './search-request.ts';
import { insertSearchEvents, type SearchEventRow } from './sql/insertSearchEvents.ts';

export interface InsightsStore {
  record(events: SearchEventRow[]): Promise<void>;
}

export function createInsightsStore(db: Queryable): InsightsStore {
  return {
    async record(events) {
      await insertSearchEvents(db, events);
    },
  };
}

const EVENT_TYPES = new Set(['view', 'click', 'conversion']);
const TOKEN = /^[a-zA-Z0-9_=/+-]{1,129}$/;
const QUERY_ID = /^[0-9a-f]{32}$/;
const MAX_EVENTS = 1000;
const MAX_OBJECT_IDS = 20;
/** Algolia accepts events up to 4 days old. */
const MAX_AGE_MS = 4 * 24 * 3600 * 1000;

/** Validates an Insights API body; throws AlgoliaError (422, as Algolia answers) on the first fault. */
export function parseInsightsBody(body: unknown, indexName: string, now = Date.now()): SearchEventRow[] {
  if (!isObject(body) || !Array.isArray(body.events)) {
    throw new AlgoliaError(400, 'The body must be an object with an events array');
  }
  if (body.events.length === 0 || body.events.length > MAX_EVENTS) {
    throw new AlgoliaError(422, `events must hold 1 to ${MAX_EVENTS} events`);
  }
  return body.events.map((event, i) => {
    const at = `events[${i}]`;
    if (!isObject(event)) throw new AlgoliaError(422, `${at} must be an object`);
    const { eventType, eventName, index, userToken, authenticatedUserToken, queryID, objectIDs, positions } =
      event;
    if (typeof eventType !== 'string' || !EVENT_TYPES.has(eventType)) {
      throw new AlgoliaError(422, `${at}.eventType must be one of view, click, conversion`);
    }
    if (typeof eventName !== 'string' || !/^[\x20-\x7e]{1,64}$/.test(eventName)) {
      throw new AlgoliaError(422, `${at}.eventName must be 1 to 64 printable ASCII characters`);
    }
    if (index !== indexName)
      throw new AlgoliaError(422, `${at}.index: index ${String(index)} does not exist`);
    if (typeof userToken !== 'string' || !TOKEN.test(userToken)) {
      throw new AlgoliaError(422, `${at}.userToken must be 1 to 129 characters of [a-zA-Z0-9_=/+-]`);
    }
    if (
      authenticatedUserToken !== undefined &&
      (typeof authenticatedUserToken !== 'string' || !TOKEN.test(authenticatedUserToken))
    ) {
      throw new AlgoliaError(
        422,
        `${at}.authenticatedUserToken must be 1 to 129 characters of [a-zA-Z0-9_=/+-]`,
      );
    }
    if (queryID !== undefined && (typeof queryID !== 'string' || !QUERY_ID.test(queryID))) {
      throw new AlgoliaError(422, `${at}.queryID must be 32 hexadecimal characters`);
    }
    if (
      !Array.isArray(objectIDs) ||
      objectIDs.length === 0 ||
      objectIDs.length > MAX_OBJECT_IDS ||
      !objectIDs.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 512)
    ) {
      throw new AlgoliaError(422, `${at}.objectIDs must hold 1 to ${MAX_OBJECT_IDS} object ids`);
    }
    if (eventType === 'click' && queryID !== undefined && positions === undefined) {
      throw new AlgoliaError(422, `${at}.positions is required for a click after a search`);
    }
    if (positions !== undefined) {
      if (
        !Array.isArray(positions) ||
        positions.length !== objectIDs.length ||
        !positions.every((p) => Number.isInteger(p) && (p as number) > 0)
      ) {
        throw new AlgoliaError(422, `${at}.positions must hold one positive integer per object id`);
      }
      if (queryID === undefined) throw new AlgoliaError(422, `${at}.positions needs a queryID`);
    }
    let timestamp = now;
    if (event.timestamp !== undefined) {
      if (typeof event.timestamp !== 'number' || !Number.isFinite(event.timestamp)) {
        throw new AlgoliaError(422, `${at}.timestamp must be milliseconds since the epoch`);
      }
      if (event.timestamp < now - MAX_AGE_MS || event.timestamp > now + 3600_000) {
        throw new AlgoliaError(422, `${at}.timestamp must be within the last 4 days`);
      }
      timestamp = event.timestamp;
    }
    return {
      event_type: eventType as SearchEventRow['event_type'],
      event_name: eventName,
      index_name: indexName,
      user_token: userToken,
      authenticated_user_token: (authenticatedUserToken as string | undefined) ?? null,
      query_id: (queryID as string | undefined) ?? null,
      object_ids: objectIDs as string[],
      positions: (positions as number[] | undefined) ?? null,
      timestamp,
    };
  });
}
