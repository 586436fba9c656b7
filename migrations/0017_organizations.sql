-- Organisations (onadata's OrganizationProfile): an account (users.is_org) that people join with a
-- role. Owners hold owner on every project and form of the organisation; owners and managers may
-- create projects and publish forms in it.
CREATE TABLE organizations (
  user_id         integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  creator_id      integer REFERENCES users(id) ON DELETE SET NULL,
  description     text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organization_members (
  org_id          integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  user_id         integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role            text NOT NULL,
  added_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX organization_members_user_idx ON organization_members (user_id);
