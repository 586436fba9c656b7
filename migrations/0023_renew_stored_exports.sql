-- Stored exports made before this build are no longer reused: XLSX, XLS, SPSS and Google Sheets
-- exports now keep formula-like answers as answered, and media links percent-encode their file
-- names. An export is reused only while its form's data version is unchanged
-- (src/modules/exports/jobs.ts), so counting one change per form makes the next request for each
-- export a new job. Linked datasets' manifest hashes change with it, so devices fetch them once.
UPDATE forms SET data_changes = data_changes + 1;
