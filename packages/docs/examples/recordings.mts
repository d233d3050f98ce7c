/**
 * Where the recorded exchanges live and how their files read: the recorder writes them
 * (record.mts), `npm run generate` bundles them for the site (print-recordings.mts), the docs test
 * compares them. Kept apart from the recorder, which loads the whole product.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ProtocolExchange } from '../src/components/protocol-exchange.ts';
import type { RecordedExchange } from '../src/components/recorded-exchange.ts';

/** One `<slug>.json` per task endpoint (`recordingSlug`). */
export const RECORDED_DIR = path.resolve(import.meta.dirname, 'recorded');

/** A recording as its file holds it. */
export function recordingText(recording: RecordedExchange | ProtocolExchange): string {
  return `${JSON.stringify(recording, null, 2)}\n`;
}

/** The committed recordings by endpoint path. */
export function readRecordings(): Record<string, RecordedExchange> {
  return readAll<RecordedExchange>(RECORDED_DIR, (recording) => recording.path);
}

/** One `<name>.json` per recording of another protocol (OpenAI's Images API, MCP). */
export const PROTOCOLS_DIR = path.resolve(import.meta.dirname, 'recorded-protocols');

/** The committed protocol recordings by name. */
export function readProtocolRecordings(): Record<string, ProtocolExchange> {
  return readAll<ProtocolExchange>(PROTOCOLS_DIR, (recording) => recording.name);
}

/** Every `.json` file of a folder, in name order, keyed by what `keyOf` reads of each. */
function readAll<T>(dir: string, keyOf: (recording: T) => string): Record<string, T> {
  const all: Record<string, T> = {};
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const recording = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as T;
    all[keyOf(recording)] = recording;
  }
  return all;
}
