-- Usage records expire after RETENTION_USAGE_DAYS: the sweeper takes the oldest first, by the time
-- the task finished, whoever owned it.
CREATE INDEX task_usage_finished ON task_usage (finished_at);
