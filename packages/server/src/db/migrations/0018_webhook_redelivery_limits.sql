-- The redeliveries owners asked for (POST /webhooks/v1/deliveries/{id}/redeliver), kept a day:
-- the API counts them per delivery (WEBHOOK_REDELIVERIES_PER_DELIVERY, in any 24 hours) and per
-- owner (WEBHOOK_REDELIVERIES_PER_MINUTE) before it sends one again, so no key can make the
-- dispatcher post to a URL of its choosing as fast as it asks. Each redelivery removes the rows
-- that have aged out.
CREATE TABLE webhook_redeliveries (
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  requested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_redeliveries_owner ON webhook_redeliveries (owner_id, requested_at);
CREATE INDEX webhook_redeliveries_delivery ON webhook_redeliveries (delivery_id, requested_at);
CREATE INDEX webhook_redeliveries_age ON webhook_redeliveries (requested_at);
