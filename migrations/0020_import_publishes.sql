-- On PGlite an import job publishes its staged rows in short transactions, since one long one
-- would hold the embedded database's single session against every other request. Once publishing
-- has begun it is carried to its end, after a crash too (before the server answers again): the
-- staged rows must then survive a crash, so import_rows is no longer UNLOGGED, and
-- import_publishes keeps what publishing needs and what it has done so far.
ALTER TABLE import_rows SET LOGGED;

CREATE TABLE import_publishes (
  import_id       text PRIMARY KEY,
  form_id         integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  actor_id        integer NOT NULL,
  overwrite       boolean NOT NULL,
  -- overwrite=true: the form's records up to this id (those before the import) are deleted
  -- first, a batch at a time; NULL once done, or without overwrite.
  delete_through  integer,
  -- The staging's outcome (counts, extra columns) for the summary.
  staged          jsonb NOT NULL,
  -- Staged rows before this seq are published (and removed from import_rows).
  next_seq        integer NOT NULL DEFAULT 0,
  additions       integer NOT NULL DEFAULT 0,
  updates         integer NOT NULL DEFAULT 0,
  -- The import's time, the same for every batch however often publishing is resumed.
  started_at      timestamptz NOT NULL
);
