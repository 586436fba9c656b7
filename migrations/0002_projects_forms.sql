-- Projects and forms, their tags, stars, roles, versions and metadata.
CREATE TABLE projects (
  id              serial PRIMARY KEY,
  name            text NOT NULL,
  owner_id        integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_by      integer REFERENCES users(id) ON DELETE SET NULL,
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  shared          boolean NOT NULL DEFAULT false,
  date_created    timestamptz NOT NULL DEFAULT now(),
  date_modified   timestamptz NOT NULL DEFAULT now(),
  deleted_at      timestamptz,
  deleted_by      integer REFERENCES users(id) ON DELETE SET NULL
);
-- One live project per (account, name), names compared without case.
CREATE UNIQUE INDEX projects_owner_name_key ON projects (owner_id, lower(name)) WHERE deleted_at IS NULL;
CREATE INDEX projects_owner_idx ON projects (owner_id);

-- A user's role on a project. One row per user: a new role replaces the old one.
CREATE TABLE project_roles (
  project_id      integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  user_id         integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role            text NOT NULL,
  PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_roles_user_idx ON project_roles (user_id);

CREATE TABLE project_tags (
  project_id      integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  tag             text NOT NULL,
  PRIMARY KEY (project_id, tag)
);
CREATE INDEX project_tags_tag_idx ON project_tags (lower(tag));

CREATE TABLE project_stars (
  project_id      integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  user_id         integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  PRIMARY KEY (project_id, user_id)
);

CREATE TABLE forms (
  id                        serial PRIMARY KEY,
  project_id                integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  owner_id                  integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_by                integer REFERENCES users(id) ON DELETE SET NULL,
  id_string                 text NOT NULL,
  sms_id_string             text NOT NULL DEFAULT '',
  title                     text NOT NULL,
  description               text NOT NULL DEFAULT '',
  version                   text NOT NULL DEFAULT '',
  uuid                      text NOT NULL,
  xml                       text NOT NULL,
  json                      jsonb NOT NULL,
  hash                      text NOT NULL,
  shared                    boolean NOT NULL DEFAULT false,
  shared_data               boolean NOT NULL DEFAULT false,
  downloadable              boolean NOT NULL DEFAULT true,
  require_auth              boolean NOT NULL DEFAULT false,
  public_key                text NOT NULL DEFAULT '',
  encrypted                 boolean NOT NULL DEFAULT false,
  allows_sms                boolean NOT NULL DEFAULT false,
  has_hxl_support           boolean NOT NULL DEFAULT false,
  instances_with_geopoints  boolean NOT NULL DEFAULT false,
  instances_with_osm        boolean NOT NULL DEFAULT false,
  num_of_submissions        integer NOT NULL DEFAULT 0,
  last_submission_time      timestamptz,
  xls_blob                  text,
  xls_filename              text,
  itemsets_csv              text,
  date_created              timestamptz NOT NULL DEFAULT now(),
  date_modified             timestamptz NOT NULL DEFAULT now(),
  last_updated_at           timestamptz NOT NULL DEFAULT now(),
  deleted_at                timestamptz,
  deleted_by                integer REFERENCES users(id) ON DELETE SET NULL
);
-- id_string is unique among an account's live forms, compared without case.
CREATE UNIQUE INDEX forms_owner_id_string_key ON forms (owner_id, lower(id_string)) WHERE deleted_at IS NULL;
CREATE INDEX forms_project_idx ON forms (project_id);
CREATE INDEX forms_shared_idx ON forms (id) WHERE shared AND deleted_at IS NULL;

CREATE TABLE form_roles (
  form_id         integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  user_id         integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role            text NOT NULL,
  PRIMARY KEY (form_id, user_id)
);
CREATE INDEX form_roles_user_idx ON form_roles (user_id);

CREATE TABLE form_tags (
  form_id         integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  tag             text NOT NULL,
  PRIMARY KEY (form_id, tag)
);
CREATE INDEX form_tags_tag_idx ON form_tags (lower(tag));

-- Every published or replaced definition of a form.
CREATE TABLE form_versions (
  id              serial PRIMARY KEY,
  form_id         integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  version         text NOT NULL,
  xml             text NOT NULL,
  json            jsonb NOT NULL,
  created_by      integer REFERENCES users(id) ON DELETE SET NULL,
  date_created    timestamptz NOT NULL DEFAULT now(),
  date_modified   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (form_id, version)
);

-- onadata's form metadata entries (xform_meta_perms, media, …).
CREATE TABLE form_metadata (
  id              serial PRIMARY KEY,
  form_id         integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  data_type       text NOT NULL,
  data_value      text NOT NULL DEFAULT '',
  extra_data      jsonb NOT NULL DEFAULT '{}'::jsonb,
  data_file       text,
  data_file_type  text,
  file_hash       text,
  date_created    timestamptz NOT NULL DEFAULT now(),
  deleted_at      timestamptz
);
CREATE INDEX form_metadata_form_idx ON form_metadata (form_id);

-- survey_preview drafts: CSV XLSForm text kept for the preview URL.
CREATE TABLE survey_drafts (
  id              serial PRIMARY KEY,
  user_id         integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  unique_string   text NOT NULL UNIQUE,
  body            text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- Uploaded files (XLSForms now, attachments later), content-addressed by SHA-256.
CREATE TABLE blobs (
  sha256          text PRIMARY KEY,
  content_type    text NOT NULL DEFAULT 'application/octet-stream',
  size            bigint NOT NULL,
  data            bytea NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
