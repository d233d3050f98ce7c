-- Live previews: the newest picture of each running task whose engine sends them (ComfyUI's sampler
-- previews), so that the status streams of every API process can show it, and a stream that opens
-- late gets the latest at once. One row per task, replaced at most twice a second by the worker
-- that holds its lease, deleted when that attempt ends (and with its task). Each new picture is
-- announced on imagegen_task_events as '<id> preview <seq>', which readers of state changes skip.
CREATE TABLE task_previews (
  task_id uuid PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  -- Counts the pictures of this row, so an announcement names the one it was sent for.
  seq integer NOT NULL DEFAULT 1,
  content_type text NOT NULL CHECK (content_type IN ('image/jpeg')),
  image bytea NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
