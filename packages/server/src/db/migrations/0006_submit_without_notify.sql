-- Submissions commit without a notification. A transaction that notifies takes PostgreSQL's
-- notify lock before it commits and holds it through the commit's WAL flush, so every notifying
-- commit waits for the one before it: the group commit could only ever use one lane. Now the
-- INSERT commits alone (several lanes flush together), and the submitter wakes the workers
-- afterwards with a NOTIFY of its own that needs no flush (tasks/sql/notifyTasks.ts), one per
-- burst of commits. Tasks going back to the queue (retries, released and expired leases) still
-- notify from their own UPDATE (tasks_requeued, 0002_tasks.sql).

DROP TRIGGER tasks_inserted ON tasks;
