-- HTTP Digest (ODK Collect, Briefcase): HA1 = MD5(login:realm:password) per login spelling
-- (username, e-mail, their lower-case forms). Each is a password equivalent for the realm, so the
-- set is stored only sealed under SECRET_KEY (AES-256-GCM), as one JSON value naming the realm.
-- NULL until the password is next set or used in a Basic login.
ALTER TABLE users ADD COLUMN digest_ha1_sealed text;
