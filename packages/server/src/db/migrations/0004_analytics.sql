-- Page views of the documentation site, posted by its analytics client on every route change.
-- Nothing identifies a reader: no IP address, no cookie, only the page, where they came from
-- (a path of the site or the external referrer) and the browser's user agent.

CREATE TABLE analytics_events (
  id bigserial PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('page_view')),
  path text NOT NULL CHECK (path LIKE '/%' AND length(path) <= 2048),
  referrer text CHECK (length(referrer) <= 2048),
  origin text,
  user_agent text,
  -- The browser's clock, kept only when within a day of ours; otherwise the time received.
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX analytics_events_by_time ON analytics_events (occurred_at);
CREATE INDEX analytics_events_by_path ON analytics_events (path, occurred_at);
