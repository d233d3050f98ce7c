-- Task control: cancelling, live status events, idempotent submissions and the task listing.

-- A cancelled task is a failed one (its status answers FAILURE with the cancel as its error); this
-- says it was the caller who ended it, so the listing can tell the two apart.
ALTER TABLE tasks ADD COLUMN cancelled_at timestamptz;

-- Counts the changes a status reader can see (state and progress), so a live status stream can
-- number its events and a client that reconnects with Last-Event-ID is sent only what is newer.
ALTER TABLE tasks ADD COLUMN version integer NOT NULL DEFAULT 0;

-- Every such change bumps the version and is announced on imagegen_task_events as
-- '<id> <version> <state>' (state 'cancelled' for a cancelled task). The API fans the
-- announcements out to its open status streams and waiting submissions with one LISTEN per
-- process; workers hear the cancels of the tasks they run. Sent at commit, so a rolled-back
-- change is never announced. Inserts are not announced: a task nobody has seen cannot be watched.
CREATE FUNCTION tasks_announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state IS DISTINCT FROM OLD.state OR NEW.progress IS DISTINCT FROM OLD.progress THEN
    NEW.version := OLD.version + 1;
    PERFORM pg_notify('imagegen_task_events', NEW.id::text || ' ' || NEW.version::text || ' ' ||
      CASE WHEN NEW.cancelled_at IS NOT NULL THEN 'cancelled' ELSE NEW.state END);
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER tasks_changed BEFORE UPDATE OF state, progress ON tasks
  FOR EACH ROW EXECUTE FUNCTION tasks_announce_change();

-- The owner's tasks newest first (GET /tasks/v1), paged by (created_at, id).
CREATE INDEX tasks_owner_newest ON tasks (owner_id, created_at DESC, id DESC);

-- Recent run times per pipeline, for the eta of pending tasks.
CREATE INDEX tasks_recent_successes ON tasks (endpoint, finished_at DESC) WHERE state = 'succeeded';

-- Idempotency-Key: a retried submission with the same key answers the task the first one created.
-- The primary key makes concurrent duplicates wait for each other, so they create one task. The
-- task is inserted in the same transaction, after its key (hence the deferred reference). A key
-- older than 24 hours is free again.
CREATE TABLE idempotency_keys (
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  -- sha256 of the submission path and the validated request: the same key with another request is refused.
  request_hash text NOT NULL,
  task_id uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_id, idempotency_key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
