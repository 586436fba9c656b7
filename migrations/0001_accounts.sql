-- Accounts: a user row carries the onadata User and UserProfile fields together.
CREATE TABLE users (
  id              serial PRIMARY KEY,
  username        text NOT NULL,
  email           text NOT NULL DEFAULT '',
  first_name      text NOT NULL DEFAULT '',
  last_name       text NOT NULL DEFAULT '',
  password_hash   text NOT NULL DEFAULT '',
  is_active       boolean NOT NULL DEFAULT true,
  is_org          boolean NOT NULL DEFAULT false,
  city            text NOT NULL DEFAULT '',
  country         text NOT NULL DEFAULT '',
  organization    text NOT NULL DEFAULT '',
  home_page       text NOT NULL DEFAULT '',
  twitter         text NOT NULL DEFAULT '',
  require_auth    boolean NOT NULL DEFAULT false,
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_by      integer REFERENCES users(id) ON DELETE SET NULL,
  date_joined     timestamptz NOT NULL DEFAULT now(),
  last_login      timestamptz
);
CREATE UNIQUE INDEX users_username_key ON users (lower(username));
CREATE INDEX users_email_idx ON users (lower(email));

-- Previous password hashes, so a password change can refuse a reused password.
CREATE TABLE password_history (
  id              serial PRIMARY KEY,
  user_id         integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  password_hash   text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_history_user_idx ON password_history (user_id);

-- API and temporary tokens: looked up by SHA-256 of the key; the key itself is kept only
-- encrypted under SECRET_KEY so /api/v1/user can show it again. A dump yields no usable token.
CREATE TABLE api_tokens (
  user_id         integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  key_hash        bytea NOT NULL UNIQUE,
  key_sealed      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE temp_tokens (
  user_id         integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  key_hash        bytea NOT NULL UNIQUE,
  key_sealed      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- Failed login attempts per (scope, account, address); a row locks out once it reaches the limit.
CREATE TABLE login_failures (
  key             text PRIMARY KEY,
  failures        integer NOT NULL DEFAULT 0,
  first_failed_at timestamptz NOT NULL DEFAULT now(),
  locked_until    timestamptz
);
