/**
 * Search insights (Algolia Insights API, `POST /1/events`): view, click and conversion events
 * from the documentation site's search, validated as Algolia does and stored in PostgreSQL.
 */
import type { Queryable } from '../db/pool.ts';
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

export class InsightsError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Validates an Insights API body; throws InsightsError (422, as Algolia answers) on the first fault. */
export function parseInsightsBody(body: unknown, indexName: string, now = Date.now()): SearchEventRow[] {
  if (!isObject(body) || !Array.isArray(body.events)) {
    throw new InsightsError('The body must be an object with an events array', 400);
  }
  if (body.events.length === 0 || body.events.length > MAX_EVENTS) {
    throw new InsightsError(`events must hold 1 to ${MAX_EVENTS} events`, 422);
  }
  return body.events.map((event, i) => {
    const at = `events[${i}]`;
    if (!isObject(event)) throw new InsightsError(`${at} must be an object`, 422);
    const { eventType, eventName, index, userToken, authenticatedUserToken, queryID, objectIDs, positions } =
      event;
    if (typeof eventType !== 'string' || !EVENT_TYPES.has(eventType)) {
      throw new InsightsError(`${at}.eventType must be one of view, click, conversion`, 422);
    }
    if (typeof eventName !== 'string' || !/^[\x20-\x7e]{1,64}$/.test(eventName)) {
      throw new InsightsError(`${at}.eventName must be 1 to 64 printable ASCII characters`, 422);
    }
    if (index !== indexName)
      throw new InsightsError(`${at}.index: index ${String(index)} does not exist`, 422);
    if (typeof userToken !== 'string' || !TOKEN.test(userToken)) {
      throw new InsightsError(`${at}.userToken must be 1 to 129 characters of [a-zA-Z0-9_=/+-]`, 422);
    }
    if (
      authenticatedUserToken !== undefined &&
      (typeof authenticatedUserToken !== 'string' || !TOKEN.test(authenticatedUserToken))
    ) {
      throw new InsightsError(
        `${at}.authenticatedUserToken must be 1 to 129 characters of [a-zA-Z0-9_=/+-]`,
        422,
      );
    }
    if (queryID !== undefined && (typeof queryID !== 'string' || !QUERY_ID.test(queryID))) {
      throw new InsightsError(`${at}.queryID must be 32 hexadecimal characters`, 422);
    }
    if (
      !Array.isArray(objectIDs) ||
      objectIDs.length === 0 ||
      objectIDs.length > MAX_OBJECT_IDS ||
      !objectIDs.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 512)
    ) {
      throw new InsightsError(`${at}.objectIDs must hold 1 to ${MAX_OBJECT_IDS} object ids`, 422);
    }
    if (eventType === 'click' && queryID !== undefined && positions === undefined) {
      throw new InsightsError(`${at}.positions is required for a click after a search`, 422);
    }
    if (positions !== undefined) {
      if (
        !Array.isArray(positions) ||
        positions.length !== objectIDs.length ||
        !positions.every((p) => Number.isInteger(p) && (p as number) > 0)
      ) {
        throw new InsightsError(`${at}.positions must hold one positive integer per object id`, 422);
      }
      if (queryID === undefined) throw new InsightsError(`${at}.positions needs a queryID`, 422);
    }
    let timestamp = now;
    if (event.timestamp !== undefined) {
      if (typeof event.timestamp !== 'number' || !Number.isFinite(event.timestamp)) {
        throw new InsightsError(`${at}.timestamp must be milliseconds since the epoch`, 422);
      }
      if (event.timestamp < now - MAX_AGE_MS || event.timestamp > now + 3600_000) {
        throw new InsightsError(`${at}.timestamp must be within the last 4 days`, 422);
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
