-- The webhook outbox. A task's webhook row is written in the transaction that finishes the task,
-- so a finished task always has its delivery and a rolled-back one never does. A dispatcher
-- delivers rows when due, retrying with exponential backoff for more than 24 hours; every attempt
-- is kept in webhook_attempts.

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  task_id uuid REFERENCES tasks (id) ON DELETE CASCADE,
  url text NOT NULL,
  -- The exact bytes signed and sent on every attempt (the task's status body as JSON).
  payload text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  -- When the next attempt is due. A claim moves it past the attempt's lease, so a dispatcher that
  -- dies mid-attempt leaves a row that falls due again by itself.
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_task ON webhook_deliveries (task_id);
CREATE INDEX webhook_deliveries_owner ON webhook_deliveries (owner_id, created_at DESC);

CREATE TABLE webhook_attempts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  -- The receiver's HTTP status, or null when no response came (refused address, timeout...).
  status_code integer,
  error text,
  -- The first kilobyte of the receiver's answer, for the owner's debugging.
  response_excerpt text,
  UNIQUE (delivery_id, attempt)
);
