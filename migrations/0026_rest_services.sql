-- REST services (onadata's /api/v1/restservices): each of a form's services receives its records
-- by POST. Deliveries wait in rest_service_outbox, written in the same statement or transaction
-- that stores the record, so a record is acknowledged exactly when its deliveries are queued. The
-- outbox is its own queue, not the jobs table: a dead endpoint's backlog is one service row in
-- back-off (however many records wait behind it), which no other form's deliveries or exports
-- ever wait on (see src/modules/restservices/delivery.ts).
CREATE TABLE rest_services (
  id               serial PRIMARY KEY,
  form_id          integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  name             text NOT NULL,
  service_url      text NOT NULL,
  -- The HMAC key, sealed under SECRET_KEY; never shown.
  secret_sealed    text,
  -- Also send each edit of a record and each change of its review.
  send_updates     boolean NOT NULL DEFAULT false,
  created_by       integer REFERENCES users(id) ON DELETE SET NULL,
  date_created     timestamptz NOT NULL DEFAULT now(),
  date_modified    timestamptz NOT NULL DEFAULT now(),
  -- Delivery log: the last attempt's HTTP status (NULL: no answer) and error, failed attempts of
  -- the record at the head of the queue, the last successful delivery, the totals.
  last_status      integer,
  last_error       text,
  last_attempt_at  timestamptz,
  last_delivery_at timestamptz,
  attempts         integer NOT NULL DEFAULT 0,
  delivered_count  bigint NOT NULL DEFAULT 0,
  dropped_count    bigint NOT NULL DEFAULT 0,
  -- Back-off: no attempt before this time.
  retry_after      timestamptz,
  -- The dispatcher holding the service (host:pid:token) and until when.
  locked_by        text,
  locked_until     timestamptz,
  UNIQUE (form_id, name, service_url)
);

CREATE TABLE rest_service_outbox (
  id          bigserial PRIMARY KEY,
  service_id  integer NOT NULL REFERENCES rest_services(id) ON DELETE CASCADE,
  -- No foreign key: a record deleted before its delivery is skipped, as onadata skips it.
  instance_id integer NOT NULL,
  event       text NOT NULL CHECK (event IN ('created', 'edited', 'reviewed')),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rest_service_outbox_service_idx ON rest_service_outbox (service_id, id);
