-- The task queue. The tasks table IS the queue: workers claim rows with FOR UPDATE SKIP LOCKED,
-- hold them under a lease they renew, and are woken by NOTIFY imagegen_tasks.

CREATE TABLE tasks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  -- The submission path, which is also the pipeline name (e.g. /sd/text2image/v1).
  endpoint text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('generation', 'load_model', 'training')),
  -- The validated request, defaults filled, seed resolved.
  input jsonb NOT NULL,
  state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
  -- server_id routing: a specific server, or a pool ('shared' or 'owner:<uuid>' for 'any').
  target_server text,
  target_pool text NOT NULL DEFAULT 'shared',
  -- The one key a claim matches on: a worker serves its own server's route and its pool's.
  route text GENERATED ALWAYS AS (coalesce('server:' || target_server, target_pool)) STORED,
  batch_id text,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
  -- Not claimable before this (retry backoff).
  run_at timestamptz NOT NULL DEFAULT now(),
  -- Unique per claim, so a worker that lost its lease cannot complete the task.
  lease_owner text,
  lease_expires_at timestamptz,
  progress real,
  progress_message text,
  result jsonb,
  error text,
  -- Blob keys of the outputs: pre-allocated for queued_image_urls, otherwise set on success.
  output_keys text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);

-- Claim: the owners with queued tasks on a route (walked one probe per owner), and each one's
-- oldest task.
CREATE INDEX tasks_queued ON tasks (route, owner_id, created_at) WHERE state = 'queued';
-- Fairness: how many tasks each owner has running, and when it was last served.
CREATE INDEX tasks_running_by_owner ON tasks (owner_id) WHERE state = 'running';
CREATE INDEX tasks_started_by_owner ON tasks (owner_id, started_at DESC) WHERE started_at IS NOT NULL;
-- Reclaiming the tasks of dead workers.
CREATE INDEX tasks_running_lease ON tasks (lease_expires_at) WHERE state = 'running';
-- Listing a batch.
CREATE INDEX tasks_batch ON tasks (owner_id, batch_id, created_at) WHERE batch_id IS NOT NULL;

-- Wake the workers when tasks become claimable: once per inserting statement (a group commit of
-- many submissions sends one notification), and when a task goes back to the queue.
CREATE FUNCTION tasks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('imagegen_tasks', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_inserted AFTER INSERT ON tasks
  FOR EACH STATEMENT EXECUTE FUNCTION tasks_notify();

CREATE TRIGGER tasks_requeued AFTER UPDATE OF state ON tasks
  FOR EACH ROW WHEN (NEW.state = 'queued' AND OLD.state IS DISTINCT FROM 'queued')
  EXECUTE FUNCTION tasks_notify();
