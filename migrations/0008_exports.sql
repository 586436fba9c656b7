-- Stored exports (onadata's Export records): one row per export job, its options and, once the job
-- has run, the file it wrote under DATA_DIR/exports (or, for Google Sheets, the sheet's address).
CREATE TABLE exports (
  id              serial PRIMARY KEY,
  form_id         integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  -- onadata's export_type: csv, xls, xlsx, csv_zip, sav_zip, kml, osm, gsheets.
  export_type     text NOT NULL,
  -- The request's export options, normalised; options_key is their canonical text, so that
  -- "an export with the same options" is one indexed comparison.
  options         jsonb NOT NULL DEFAULT '{}'::jsonb,
  options_key     text NOT NULL,
  -- A caller who may only see their own records gets exports of only those; such exports are
  -- never reused for anyone else.
  submitted_by    integer REFERENCES users(id) ON DELETE CASCADE,
  -- The job that writes the export (jobs.uuid), onadata's task_id.
  task_id         uuid,
  status          text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SUCCESS', 'FAILURE')),
  error_message   text,
  -- Relative to DATA_DIR/exports; NULL until the file is complete.
  file_path       text,
  filename        text,
  size            bigint,
  -- Set for exports that live elsewhere (Google Sheets).
  external_url    text,
  -- The form's data and definition when the export was requested, as one opaque text: the export
  -- is up to date while the form's current state reads the same.
  data_version    text NOT NULL DEFAULT '',
  created_by      integer REFERENCES users(id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz
);
CREATE INDEX exports_reuse_idx ON exports (form_id, export_type, options_key, id);
CREATE INDEX exports_task_idx ON exports (task_id);

-- OAuth credentials for the spreadsheet provider (Google Sheets exports), per user, sealed under
-- SECRET_KEY: {access_token, refresh_token, expires_at}.
CREATE TABLE spreadsheet_credentials (
  user_id         integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  sealed          text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
