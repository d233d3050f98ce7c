-- Accounts and the owner's records: owners, their API keys and subscriptions, the servers that
-- server_id routes to, models, stored output images and uploaded input images.
-- Every row except an owner's carries owner_id: reads always filter on it, so another owner's id
-- reads exactly like a missing one.

CREATE TABLE owners (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  -- Standard Webhooks secret: 'whsec_' + base64 of 24 random bytes. The owner can read it.
  webhook_secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  -- sha256 of the whole key; the key itself is never stored.
  key_hash bytea NOT NULL UNIQUE,
  -- The first characters of the key, so an operator can tell keys apart in listings.
  prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_owner ON api_keys (owner_id);

CREATE TABLE subscriptions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  plan text NOT NULL CHECK (plan IN ('FREE', 'TRIAL', 'BASIC', 'STANDARD', 'SUPERCHARGE', 'EPTRIAL',
    'EPBASIC', 'EPSTANDARD', 'EPPREMIUM', 'WEEKLY', 'MONTHLY', 'UNLIMITED')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'cancelled', 'expired')),
  pod_id text,
  pod_status text NOT NULL DEFAULT 'unknown',
  period_start timestamptz NOT NULL DEFAULT now(),
  period_end timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscriptions_owner ON subscriptions (owner_id, created_at DESC);

-- Routing targets for server_id. owner_id null: the shared pool; otherwise an enterprise owner's
-- dedicated server. Workers announce themselves with their server id.
CREATE TABLE servers (
  id text PRIMARY KEY,
  owner_id uuid REFERENCES owners (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'unknown',
  last_seen_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX servers_owner ON servers (owner_id);

-- UserModel (the contract's record). model_id is a lower-case hex hash, so a request can name it where
-- the contract admits `{hash}`.
CREATE TABLE models (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  model_id text NOT NULL UNIQUE,
  model_name text NOT NULL,
  model_url text,
  pretrained_model_path text,
  base_model text NOT NULL,
  model_type text NOT NULL,
  model_extension text,
  revision text,
  description text NOT NULL DEFAULT '',
  tags text NOT NULL DEFAULT '',
  sample_images jsonb NOT NULL DEFAULT '[]',
  images_generated integer NOT NULL DEFAULT 0,
  invocations integer NOT NULL DEFAULT 0,
  trigger_words text,
  trained_model boolean NOT NULL DEFAULT false,
  verified boolean NOT NULL DEFAULT false,
  nsfw boolean NOT NULL DEFAULT false,
  creator_link text,
  donation_link text,
  visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'public')),
  -- 'loading' until the load/train task completes, then 'ready' (or 'failed').
  status text NOT NULL DEFAULT 'loading' CHECK (status IN ('loading', 'ready', 'failed')),
  task_id uuid,
  creation_timestamp timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX models_owner ON models (owner_id, creation_timestamp DESC);

-- Which servers a model has been synced to (SyncModelPrompt).
CREATE TABLE model_syncs (
  model_id uuid NOT NULL REFERENCES models (id) ON DELETE CASCADE,
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  server_id text NOT NULL,
  synced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (model_id, server_id)
);

-- ImageInfo / UserImage: one row per stored output image. backblaze_file_id carries the blob key.
CREATE TABLE images (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  task_id uuid,
  model_id text,
  blob_key text NOT NULL,
  download_url text NOT NULL,
  json jsonb NOT NULL DEFAULT '{}',
  creation_timestamp timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX images_owner ON images (owner_id, creation_timestamp DESC);
CREATE INDEX images_task ON images (task_id);

-- Input images uploaded through the multipart upload endpoint.
CREATE TABLE uploads (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  blob_key text NOT NULL UNIQUE,
  content_type text NOT NULL,
  size_bytes integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX uploads_owner ON uploads (owner_id, created_at DESC);
