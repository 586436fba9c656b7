-- Browser sign-ins (the /o/ pages and the web app). The sealed cookie carries a random session
-- key; the server keeps only the key's SHA-256 and the session's expiry. Signing out deletes the
-- row, which ends the session wherever the cookie was copied, and a database dump holds no key.
CREATE TABLE browser_sessions (
  key_hash            bytea PRIMARY KEY,
  user_id             integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at          timestamptz NOT NULL,
  expires_at          timestamptz NOT NULL
);
CREATE INDEX browser_sessions_user_idx ON browser_sessions (user_id);
