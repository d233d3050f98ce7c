/**
 * The recorded exchanges as one JSON object by endpoint path, for the site's `<RecordedExchange>`
 * (`npm run generate` writes it to .generated/recorded-exchanges.json); with `--protocols`, the
 * protocol recordings by name, for `<ProtocolExchange>` (.generated/protocol-exchanges.json).
 */
import { readProtocolRecordings, readRecordings } from './recordings.mts';

const recordings = process.argv.includes('--protocols') ? readProtocolRecordings() : readRecordings();
process.stdout.write(`${JSON.stringify(recordings)}\n`);
