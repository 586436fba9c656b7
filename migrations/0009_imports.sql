-- Record imports (CSV, XLS, XLSX). An import that runs as a job checks and converts its rows in
-- short transactions, staging them in import_rows, then applies them all in one final transaction:
-- until then the form's data is untouched, so a failure or a killed server leaves nothing behind.
-- The staging rows are disposable (a retried job stages again), hence UNLOGGED.
CREATE UNLOGGED TABLE import_rows (
  import_id     text NOT NULL,
  seq           integer NOT NULL,
  -- uuid of the record this row edits; NULL for a new record
  target_uuid   text,
  uuid          text NOT NULL,
  xml           text NOT NULL,
  json          text NOT NULL,
  version       text NOT NULL,
  submitted_by  integer,
  -- _submission_time as written in the file (ISO 8601 with a zone); NULL: the time of the import
  date_created  text,
  total_media   integer NOT NULL,
  -- JSON array of the attachment names the record references
  media         text NOT NULL,
  has_geopoint  boolean NOT NULL,
  PRIMARY KEY (import_id, seq)
);

-- The uploaded file of an import that runs as a job, in pieces, so that any worker can read it.
CREATE TABLE import_files (
  import_id     text NOT NULL,
  seq           integer NOT NULL,
  data          bytea NOT NULL,
  PRIMARY KEY (import_id, seq)
);

-- What an applied import did, written in the transaction that applied it: a job run again after a
-- crash finds its import already applied and reports it rather than applying it twice.
CREATE TABLE import_results (
  import_id     text PRIMARY KEY,
  form_id       integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  result        jsonb NOT NULL,
  finished_at   timestamptz NOT NULL DEFAULT now()
);
