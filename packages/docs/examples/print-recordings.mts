/**
 * The recorded exchanges as one JSON object by endpoint path, for the site's `<RecordedExchange>`:
 * `npm run generate` writes it to .generated/recorded-exchanges.json.
 */
import { readRecordings } from './recordings.mts';

process.stdout.write(`${JSON.stringify(readRecordings())}\n`);
