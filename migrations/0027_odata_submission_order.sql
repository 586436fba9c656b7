-- The records of a form by submission date, then `_id`: the OData feed orders by
-- `__system/submissionDate` with `_id` breaking ties (in the same direction), so that a page
-- ordered that way is one index range from the previous page's last record (a keyset), not a sort
-- of every match. It serves whatever the index it replaces served.
CREATE INDEX instances_form_created_idx ON instances (form_id, date_created, id) WHERE deleted_at IS NULL;
DROP INDEX instances_form_time_idx;
