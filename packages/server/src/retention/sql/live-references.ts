/** A blob key inside one of the API's own links (`.../files/<folder>/<name>`), as a regular expression. */
const FILES_LINK = "'/files/([A-Za-z0-9_-]+/[A-Za-z0-9._-]+)'";

/**
 * `live_files`: the blob keys that must stay whatever their age, gathered once per statement so
 * each candidate file costs one hash probe. They are the outputs of the tasks that are queued or
 * running, the files their inputs link to (an upload, an earlier output), and the files models show
 * among their sample images (models are never removed by age, and neither are their pictures).
 */
export const LIVE_FILES = `live_files AS MATERIALIZED (
    SELECT unnest(t.output_keys) AS blob_key FROM tasks t WHERE t.state IN ('queued', 'running')
    UNION
    SELECT link[1] FROM tasks t, regexp_matches(t.input::text, ${FILES_LINK}, 'g') AS link
    WHERE t.state IN ('queued', 'running')
    UNION
    SELECT link[1] FROM models m, regexp_matches(m.sample_images::text, ${FILES_LINK}, 'g') AS link
  )`;
