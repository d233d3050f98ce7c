-- Limits on when and how much a task runs: a deadline the caller sets (Cancel-After), and the cap
-- of each plan on how many of one owner's tasks run at once.

-- Past this moment the task must not run: a queued one fails without running, a running one is
-- aborted. Null: no deadline. Set at submission to now() + Cancel-After; cancel_after keeps the
-- duration as the caller wrote it (`1h30m`), for the error that names it.
ALTER TABLE tasks ADD COLUMN deadline_at timestamptz, ADD COLUMN cancel_after text;

-- The queued tasks whose deadline passed, found without a scan (no deadlines: an empty index).
CREATE INDEX tasks_queued_deadline ON tasks (deadline_at) WHERE state = 'queued' AND deadline_at IS NOT NULL;

-- Whether one more of the owner's tasks may start under a cap of `cap` running tasks. The claim
-- picks its task from its statement's snapshot, which cannot see a claim committed meanwhile; this
-- function counts again under a lock per owner held to the end of the claim's transaction, and a
-- VOLATILE function's query takes a fresh snapshot, so it sees every claim that committed before
-- the lock was granted. Two workers claiming one owner's tasks at once therefore never pass the cap.
CREATE FUNCTION tasks_owner_may_start(owner uuid, cap integer) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- 0x74617363 ('tasc'): this lock's namespace, apart from the other advisory locks.
  PERFORM pg_advisory_xact_lock(1952543587, hashtext(owner::text));
  RETURN (SELECT count(*) FROM tasks WHERE owner_id = owner AND state = 'running') < cap;
END;
$$;
