-- The role a form member was granted (by a form share, or their project role reaching the form),
-- beside the role they hold, which the form's xform_meta_perms may have narrowed. Changing the meta
-- permissions recomputes the held role from this one, so it never rises above what was granted.
-- Roles stored before this column existed count as granted as held.
ALTER TABLE form_roles ADD COLUMN granted_role text;
UPDATE form_roles SET granted_role = role;
