-- OAuth 2 authorization server (/o/): client applications, authorization codes, access and
-- refresh tokens. Client secrets, codes and tokens are kept only as SHA-256 digests of random
-- high-entropy values, looked up by digest: a database dump yields nothing usable.
CREATE TABLE oauth_applications (
  id                        serial PRIMARY KEY,
  user_id                   integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name                      text NOT NULL,
  client_id                 text NOT NULL UNIQUE,
  -- NULL for public clients, which have no secret and must use PKCE instead.
  client_secret_hash        bytea,
  client_type               text NOT NULL CHECK (client_type IN ('confidential', 'public')),
  authorization_grant_type  text NOT NULL CHECK (authorization_grant_type IN ('authorization-code')),
  -- Space-separated, matched exactly (as django-oauth-toolkit stores them).
  redirect_uris             text NOT NULL,
  created_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_applications_user_idx ON oauth_applications (user_id);

CREATE TABLE oauth_authorization_codes (
  id                        serial PRIMARY KEY,
  code_hash                 bytea NOT NULL UNIQUE,
  application_id            integer NOT NULL REFERENCES oauth_applications(id) ON DELETE CASCADE,
  user_id                   integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  redirect_uri              text NOT NULL,
  scope                     text NOT NULL,
  code_challenge            text,
  code_challenge_method     text,
  expires_at                timestamptz NOT NULL,
  created_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_authorization_codes_expires_idx ON oauth_authorization_codes (expires_at);

CREATE TABLE oauth_access_tokens (
  id                        serial PRIMARY KEY,
  token_hash                bytea NOT NULL UNIQUE,
  application_id            integer NOT NULL REFERENCES oauth_applications(id) ON DELETE CASCADE,
  user_id                   integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scope                     text NOT NULL,
  expires_at                timestamptz NOT NULL,
  created_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_access_tokens_user_idx ON oauth_access_tokens (user_id);

-- A refresh token outlives its access token; using it revokes it (rotation) and deletes the
-- access token issued with it.
CREATE TABLE oauth_refresh_tokens (
  id                        serial PRIMARY KEY,
  token_hash                bytea NOT NULL UNIQUE,
  access_token_id           integer UNIQUE REFERENCES oauth_access_tokens(id) ON DELETE SET NULL,
  application_id            integer NOT NULL REFERENCES oauth_applications(id) ON DELETE CASCADE,
  user_id                   integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scope                     text NOT NULL,
  created_at                timestamptz NOT NULL DEFAULT now(),
  revoked_at                timestamptz
);
CREATE INDEX oauth_refresh_tokens_user_idx ON oauth_refresh_tokens (user_id);
