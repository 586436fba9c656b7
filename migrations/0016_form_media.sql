-- Form media files and supporting documents uploaded through /api/v1/metadata: the entry keeps the
-- file's content-addressed blob (the blobs table, so an upload commits with its entry), its
-- detected content type and its md5 hash (the `hash` of an OpenRosa manifest).
ALTER TABLE form_metadata ADD COLUMN blob_sha256 text REFERENCES blobs(sha256);
CREATE INDEX form_metadata_media_idx ON form_metadata (form_id) WHERE data_type = 'media' AND deleted_at IS NULL;
