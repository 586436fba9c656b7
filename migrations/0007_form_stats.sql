-- Submission counters per form, split over 16 rows per form: every submission adds to the row of
-- its id's shard, so concurrent submissions to one form do not queue behind one row lock.
CREATE TABLE form_stats (
  form_id               integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  shard                 smallint NOT NULL,
  submissions           integer NOT NULL DEFAULT 0,
  geopoints             integer NOT NULL DEFAULT 0,
  last_submission_time  timestamptz,
  PRIMARY KEY (form_id, shard)
);
INSERT INTO form_stats (form_id, shard, submissions, geopoints, last_submission_time)
  SELECT id, 0, num_of_submissions, CASE WHEN instances_with_geopoints THEN 1 ELSE 0 END, last_submission_time
  FROM forms WHERE num_of_submissions > 0 OR last_submission_time IS NOT NULL;
ALTER TABLE forms DROP COLUMN num_of_submissions;
ALTER TABLE forms DROP COLUMN last_submission_time;
ALTER TABLE forms DROP COLUMN instances_with_geopoints;
