-- One instanceID at a time: a submission that stores an instanceID and an edit that archives it
-- take turns.
--
-- A new submission is stored only if no record of the form has, or once had, its instanceID: the
-- live one is caught by the unique index, an archived one (an edit replaced it) by a look at
-- instance_history. That look used the statement's snapshot, so an original re-sent while an
-- edit of it was committing missed the new history row, found the index free once the edit had
-- moved the record to its new uuid, and was stored a second time. Both sides now take a
-- transaction lock on (form, instanceID) first: the edit before it locks the record it replaces,
-- the insert inside this function, whose look at the history then runs on a fresh snapshot
-- (VOLATILE functions take one per query) that sees any edit committed while it waited.
--
-- The key is one bigint, (form id << 32) | 32-bit hash of the uuid: the two-integer advisory
-- keys other modules use live in a separate key space.
CREATE FUNCTION gather_uuid_lock_key(p_form integer, p_uuid text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT (p_form::bigint << 32) | (hashtext(p_uuid)::bigint & 4294967295)
$$;

CREATE FUNCTION gather_uuid_never_archived(p_form integer, p_uuid text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(gather_uuid_lock_key(p_form, p_uuid));
  RETURN NOT EXISTS (SELECT 1 FROM instance_history h WHERE h.form_id = p_form AND h.uuid = p_uuid);
END
$$;
