-- instance_history.instance_id references instances with ON DELETE CASCADE; without an index
-- every deleted record searched the whole history table, so deleting many records that had
-- been edited (a form's deletion cascading to them) took time quadratic in their number
-- (30,000 such records: 56 s).
CREATE INDEX instance_history_instance_idx ON instance_history (instance_id);
