import { FILES_LINK_PATTERN } from '../../storage/blob-keys.ts';

/**
 * `live_files`: the blob keys that must stay whatever their age, gathered once per statement so
 * each candidate file costs one hash probe. They are the files of the tasks that are queued or
 * running, their outputs and the files their inputs link to (an upload, an earlier output;
 * recorded at submission as `input_keys`, found through the `tasks_live` index), and the files
 * models show among their sample images (models are never removed by age, and neither are their
 * pictures).
 */
export const LIVE_FILES = `live_files AS MATERIALIZED (
    SELECT unnest(t.output_keys || t.input_keys) AS blob_key FROM tasks t WHERE t.state IN ('queued', 'running')
    UNION
    SELECT link[1] FROM models m, regexp_matches(m.sample_images::text, '${FILES_LINK_PATTERN}', 'g') AS link
  )`;
