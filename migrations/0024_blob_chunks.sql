-- A file is stored as chunks of at most 256 KiB, written and read one chunk per statement, so that
-- storing or serving a 100 MB photo never holds the whole file in the server's memory (on PGlite a
-- single bytea value was held about eleven times over while it crossed into the database).
-- Photos and videos are compressed already: EXTERNAL keeps chunks out of line without trying to
-- compress them again.
CREATE TABLE blob_chunks (
  sha256 text NOT NULL REFERENCES blobs (sha256) ON DELETE CASCADE,
  seq    integer NOT NULL,
  data   bytea NOT NULL,
  PRIMARY KEY (sha256, seq)
);
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

INSERT INTO blob_chunks (sha256, seq, data)
SELECT b.sha256, s.seq, substring(b.data FROM s.seq * 262144 + 1 FOR 262144)
FROM blobs b
CROSS JOIN LATERAL generate_series(0, ((b.size - 1) / 262144)::integer) AS s (seq)
WHERE b.size > 0;

ALTER TABLE blobs DROP COLUMN data;
-- The CRC-32 of the whole file, so a zip can store it with its sizes up front while streaming it
-- chunk by chunk. Files stored before this migration have none until first zipped.
ALTER TABLE blobs ADD COLUMN crc32 bigint;
