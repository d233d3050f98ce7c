-- Webhook events and usage records.
--
-- A task may call its webhook at more moments than its end (`webhook_events_filter`): each
-- delivery names its event. Rows from before this migration were all completions.
ALTER TABLE webhook_deliveries
  ADD COLUMN event text NOT NULL DEFAULT 'completed' CHECK (event IN ('start', 'progress', 'completed'));

-- One row per finished task (SUCCESS or FAILURE, cancels included), written in the transaction
-- that settles it. It is the owner's bill of what ran, so it outlives the task row: no foreign key
-- to tasks, and the retention of tasks does not touch it.
CREATE TABLE task_usage (
  task_id uuid PRIMARY KEY,
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  pipeline text NOT NULL,
  succeeded boolean NOT NULL,
  -- The engine that ran it, the ComfyUI server it ran on, the model it used; null when unknown
  -- (a task cancelled or failed before an engine ran it).
  engine text,
  server text,
  model text,
  images integer NOT NULL DEFAULT 0,
  pixels bigint NOT NULL DEFAULT 0,
  -- From submission to a worker's start (or to the end, for a task that never started), and from
  -- that start to the end.
  queue_seconds double precision NOT NULL,
  run_seconds double precision NOT NULL,
  finished_at timestamptz NOT NULL
);
CREATE INDEX task_usage_owner_day ON task_usage (owner_id, finished_at);
