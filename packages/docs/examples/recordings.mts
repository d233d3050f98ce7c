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
  const all: Record<string, RecordedExchange> = {};
  for (const file of readdirSync(RECORDED_DIR)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const recording = JSON.parse(readFileSync(path.join(RECORDED_DIR, file), 'utf8')) as RecordedExchange;
    all[recording.path] = recording;
  }
  return all;
}

/** One `<name>.json` per recording of another protocol (OpenAI's Images API, MCP). */
export const PROTOCOLS_DIR = path.resolve(import.meta.dirname, 'recorded-protocols');

/** The committed protocol recordings by name. */
export function readProtocolRecordings(): Record<string, ProtocolExchange> {
  const all: Record<string, ProtocolExchange> = {};
  for (const file of readdirSync(PROTOCOLS_DIR)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const recording = JSON.parse(readFileSync(path.join(PROTOCOLS_DIR, file), 'utf8')) as ProtocolExchange;
    all[recording.name] = recording;
  }
  return all;
}
