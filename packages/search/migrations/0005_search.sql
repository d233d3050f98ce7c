-- Search insights: the view, click and conversion events the documentation site's search sends
-- (Algolia Insights API shape), kept for relevance work. One row per event as received.

CREATE TABLE search_events (
  id bigserial PRIMARY KEY,
  event_type text NOT NULL CHECK (event_type IN ('view', 'click', 'conversion')),
  event_name text NOT NULL,
  index_name text NOT NULL,
  user_token text NOT NULL,
  authenticated_user_token text,
  -- The queryID of the search that showed the hits (clickAnalytics), when the event follows one.
  query_id text,
  object_ids text[] NOT NULL,
  -- 1-based positions of object_ids in that search's hits (clicks after a search).
  positions integer[],
  event_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX search_events_query ON search_events (query_id) WHERE query_id IS NOT NULL;
CREATE INDEX search_events_received ON search_events (received_at);
