import path from 'node:path';
import type { BlobStore } from './blob-store.ts';
import { LocalBlobStore } from './local-blob-store.ts';
import { S3BlobStore } from './s3-blob-store.ts';

export type FilesVia = 'presigned' | 'proxy';

/** How long a presigned download URL lives unless S3_PRESIGN_SECONDS says otherwise. */
const DEFAULT_PRESIGN_SECONDS = 900;
/** SigV4's own upper bound on a presigned URL's lifetime (seven days). */
const MAX_PRESIGN_SECONDS = 604_800;

/**
 * The store the environment asks for. With S3_BUCKET: that bucket (S3_ENDPOINT, S3_REGION,
 * S3_FORCE_PATH_STYLE; credentials from the AWS SDK's default chain), its files served as
 * FILES_VIA says. Otherwise `$IMAGEGEN_DATA_DIR/files` (default `./data/files`), which only
 * processes on this machine can read.
 *
 * FILES_VIA defaults to `presigned`: image bytes then go from the bucket to the client and never
 * through the API processes. `proxy` is for buckets clients cannot reach (a private network).
 */
export function blobStoreFromEnv(env: NodeJS.ProcessEnv = process.env): BlobStore {
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) {
    if (env.FILES_VIA) throw new Error('FILES_VIA applies to an S3 bucket only: set S3_BUCKET too');
    return new LocalBlobStore(path.resolve(env.IMAGEGEN_DATA_DIR ?? './data', 'files'));
  }
  const via = filesVia(env.FILES_VIA);
  return new S3BlobStore({
    bucket,
    endpoint: env.S3_ENDPOINT || undefined,
    region: env.S3_REGION || undefined,
    forcePathStyle: flag(env.S3_FORCE_PATH_STYLE, 'S3_FORCE_PATH_STYLE'),
    presignSeconds: via === 'presigned' ? presignSeconds(env.S3_PRESIGN_SECONDS) : undefined,
  });
}

function filesVia(value: string | undefined): FilesVia {
  if (value === undefined || value === '' || value === 'presigned') return 'presigned';
  if (value === 'proxy') return 'proxy';
  throw new Error(`FILES_VIA=${value}: expected presigned or proxy`);
}

function presignSeconds(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PRESIGN_SECONDS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PRESIGN_SECONDS)
    throw new Error(
      `S3_PRESIGN_SECONDS=${value}: expected a whole number of seconds from 1 to ${MAX_PRESIGN_SECONDS}`,
    );
  return n;
}

function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new Error(`${name}=${value}: expected true or false`);
}
