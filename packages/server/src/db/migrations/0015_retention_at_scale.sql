-- Retention at scale: what the sweeper and the submissions it races with need (retention/).

-- The files a queued or running task reads, recorded at submission (the blob keys its input links
-- to through /files/), so the retention sweeper keeps them without reading every live task's input.
-- Tasks that are queued or running now get theirs here; finished ones never need them.
ALTER TABLE tasks ADD COLUMN input_keys text[] NOT NULL DEFAULT '{}';
UPDATE tasks SET input_keys = ARRAY(
    SELECT DISTINCT link[1] FROM regexp_matches(input::text, '/files/([A-Za-z0-9_-]+/[A-Za-z0-9._-]+)', 'g') AS link)
  WHERE state IN ('queued', 'running');

-- Every sweeper batch gathers the live tasks' files: without this index that is a scan of every
-- task ever kept, with it a walk over the few that are live.
CREATE INDEX tasks_live ON tasks (state) WHERE state IN ('queued', 'running');
-- A submission locks the stored images its input names (tasks/sql/insertTasks.ts).
CREATE INDEX images_blob_key ON images (blob_key);
-- Deleting a task deletes its Idempotency-Key (ON DELETE CASCADE): without this index each task
-- the sweeper removes costs a scan of the day's keys.
CREATE INDEX idempotency_keys_task ON idempotency_keys (task_id);
