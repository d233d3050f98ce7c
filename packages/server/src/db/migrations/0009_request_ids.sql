-- The request id of the submission that created a task (the X-Request-Id the API answered), so
-- the worker's and the webhook dispatcher's log lines for the task carry the same id as the
-- API's. Null for tasks queued before it existed.
ALTER TABLE tasks ADD COLUMN request_id text;
