-- Records stored before migration 0013 have no repeat counts yet: exports count them from their
-- record with gather_repeat_counts, about 65 µs a record in PostgreSQL, on every export. One
-- background job (src/modules/submissions/repeat-counts-job.ts) stores their counts, a batch at
-- a time, so that exports soon read only the column. Nothing to do on a new database.
INSERT INTO jobs (uuid, type, payload)
SELECT gen_random_uuid(), 'count_stored_repeats', 'null'::jsonb
WHERE EXISTS (SELECT 1 FROM instances WHERE repeat_counts IS NULL);
