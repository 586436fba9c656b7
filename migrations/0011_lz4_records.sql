-- Where the server has lz4 (PostgreSQL 14+ built with it; not PGlite), submissions' large values
-- are compressed with it: it decompresses several times faster than the default pglz (reading a
-- page of records or an export is mostly decompression) and compresses for about half the CPU.
-- Existing values keep their method; each value records how it was compressed.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
    ALTER TABLE instances ALTER COLUMN json SET COMPRESSION lz4;
    ALTER TABLE instances ALTER COLUMN json_text SET COMPRESSION lz4;
    ALTER TABLE instances ALTER COLUMN xml SET COMPRESSION lz4;
  END IF;
END
$$;
