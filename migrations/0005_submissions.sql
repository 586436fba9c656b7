-- Submissions (onadata's instances), their earlier versions, and their media attachments.
CREATE TABLE instances (
  id                  serial PRIMARY KEY,
  form_id             integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  uuid                text NOT NULL,
  xml                 text NOT NULL,
  -- The record as the data API shows it, less what comes from this row's columns
  -- (_id, _xform_id, _submission_time, _date_modified, _submitted_by, _attachments, …).
  json                jsonb NOT NULL,
  version             text NOT NULL DEFAULT '',
  status              text NOT NULL DEFAULT 'submitted_via_web',
  submitted_by        integer REFERENCES users(id) ON DELETE SET NULL,
  date_created        timestamptz NOT NULL DEFAULT now(),
  date_modified       timestamptz NOT NULL DEFAULT now(),
  edited              boolean NOT NULL DEFAULT false,
  last_edited         timestamptz,
  last_edited_by      integer REFERENCES users(id) ON DELETE SET NULL,
  deleted_at          timestamptz,
  deleted_by          integer REFERENCES users(id) ON DELETE SET NULL,
  total_media         integer NOT NULL DEFAULT 0,
  media_count         integer NOT NULL DEFAULT 0,
  has_geopoint        boolean NOT NULL DEFAULT false
);
-- An instanceID is unique within a form (not across forms).
CREATE UNIQUE INDEX instances_form_uuid_key ON instances (form_id, uuid);
CREATE INDEX instances_form_live_idx ON instances (form_id, id) WHERE deleted_at IS NULL;
CREATE INDEX instances_form_time_idx ON instances (form_id, date_created) WHERE deleted_at IS NULL;

CREATE TABLE instance_history (
  id                  serial PRIMARY KEY,
  instance_id         integer NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
  form_id             integer NOT NULL,
  uuid                text NOT NULL,
  xml                 text NOT NULL,
  date_created        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX instance_history_form_uuid_idx ON instance_history (form_id, uuid);

CREATE TABLE attachments (
  id                  serial PRIMARY KEY,
  instance_id         integer NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
  name                text NOT NULL,
  mimetype            text NOT NULL,
  blob                text NOT NULL,
  size                bigint NOT NULL,
  date_created        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, name)
);
