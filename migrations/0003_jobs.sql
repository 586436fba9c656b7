-- Background jobs (async form publish/delete, exports, imports). A job is enqueued inside the
-- request's transaction, so it exists exactly when the request's writes commit. Workers claim
-- due rows with FOR UPDATE SKIP LOCKED and hold a lease (locked_until) that a heartbeat extends;
-- a row still STARTED after its lease ran out belonged to a worker that died and is claimed again.
CREATE TABLE jobs (
  id              serial PRIMARY KEY,
  uuid            uuid NOT NULL UNIQUE,
  type            text NOT NULL,
  payload         jsonb NOT NULL DEFAULT 'null'::jsonb,
  status          text NOT NULL DEFAULT 'PENDING'
                  CHECK (status IN ('PENDING', 'STARTED', 'SUCCESS', 'FAILURE')),
  result          jsonb,
  error           text,
  -- {"current": n, "total": m} while an import or export runs.
  progress        jsonb,
  attempts        integer NOT NULL DEFAULT 0,
  -- NULL: the limit the job type's handler registered (or the worker's default) applies; it is
  -- filled in when the job is first claimed.
  max_attempts    integer CHECK (max_attempts >= 1),
  run_after       timestamptz NOT NULL DEFAULT now(),
  locked_until    timestamptz,
  -- Which claim holds the lease (worker host, pid and a per-claim token): every write a worker
  -- makes after the claim checks it, so a worker whose lease was taken over cannot overwrite.
  locked_by       text,
  created_by      integer REFERENCES users(id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz,
  finished_at     timestamptz
);

-- The claim query walks unfinished jobs in id order; finished jobs (the bulk of the table) stay
-- out of this index.
CREATE INDEX jobs_claimable_idx ON jobs (id) WHERE status IN ('PENDING', 'STARTED');
CREATE INDEX jobs_created_by_idx ON jobs (created_by);
