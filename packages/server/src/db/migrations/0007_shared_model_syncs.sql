-- /sync_model/v1 without server_id syncs the model to the shared servers: its task runs in the
-- shared pool, and the sync is recorded with server_id NULL. Still one row per model and
-- destination (NULLS NOT DISTINCT), so syncing again refreshes synced_at.

ALTER TABLE model_syncs DROP CONSTRAINT model_syncs_pkey;
ALTER TABLE model_syncs ALTER COLUMN server_id DROP NOT NULL;
CREATE UNIQUE INDEX model_syncs_destination ON model_syncs (model_id, server_id) NULLS NOT DISTINCT;
