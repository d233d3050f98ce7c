/**
 * The condition under which the stored file `f.blob_key` may go: no queued or running task names
 * it (an upload or an earlier output among its inputs, or its own outputs), and no model shows it
 * among its sample images (models are never removed by age, and neither are their pictures).
 */
export const UNREFERENCED_FILE = `NOT EXISTS (
    SELECT 1 FROM tasks t WHERE t.state IN ('queued', 'running')
      AND (f.blob_key = ANY (t.output_keys) OR strpos(t.input::text, f.blob_key) > 0))
  AND NOT EXISTS (SELECT 1 FROM models m WHERE strpos(m.sample_images::text, f.blob_key) > 0)`;
