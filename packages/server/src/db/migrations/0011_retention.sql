-- Retention: the sweeper (retention/sweeper.ts) deletes what is older than its settings, oldest
-- first, in small batches. These indexes let each batch find its oldest rows without a scan.

CREATE INDEX images_age ON images (creation_timestamp);
CREATE INDEX uploads_age ON uploads (created_at);
CREATE INDEX tasks_finished_age ON tasks (finished_at) WHERE state IN ('succeeded', 'failed');
CREATE INDEX webhook_attempts_age ON webhook_attempts (started_at);
