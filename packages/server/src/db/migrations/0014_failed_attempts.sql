-- Failed tasks an operator can read and requeue (`imagegen-server tasks failed`, `tasks requeue`).

-- Every failed attempt's error, oldest first: [{"attempt": 1, "error": "...", "at": "..."}, ...].
-- `error` keeps the last one, as the status answers it; this keeps what the retries overwrote.
ALTER TABLE tasks ADD COLUMN attempt_errors jsonb NOT NULL DEFAULT '[]';

-- The failed tasks, newest first, for the listing; cancelled ones are the caller's doing, not a fault.
CREATE INDEX tasks_failed_newest ON tasks (finished_at DESC) WHERE state = 'failed' AND cancelled_at IS NULL;
