// The data API's record as JSON text, assembled here from the stored record's text and its row's
// columns (repository RECORD_COLUMNS). Building the meta keys as jsonb in the database cost about
// 40 µs a record, most of the time of a long listing; here it is string work of a microsecond.
// The text is the one the database printed before: jsonb's key order (shorter keys first, then
// byte order) and its `": "` and `", "` separators.

export interface RecordRow {
  /** The stored record's text (instances.json_text). */
  json: string;
  id: number;
  form_id: number;
  /** Times as epoch microseconds (float8: exact). */
  created_us: number;
  modified_us: number;
  edited_us: number | null;
  submitted_by_name: string | null;
  edited: boolean;
  last_edited_by_name: string | null;
  total_media: number;
  media_count: number;
  /** The `_attachments` list as jsonb text, NULL for none. */
  attachments: string | null;
}

/** An ISO time with microseconds, as the database's to_char(… 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"') wrote it, in JSON. */
function isoMicros(us: number | null): string {
  if (us === null) return 'null';
  const seconds = Math.floor(us / 1e6);
  const fraction = String(us - seconds * 1e6).padStart(6, '0');
  return `"${new Date(seconds * 1000).toISOString().slice(0, 19)}.${fraction}+00:00"`;
}

export function recordText(row: RecordRow): string {
  const text = (value: string | null): string => JSON.stringify(value);
  const meta =
    `{"_id": ${row.id}, "_edited": ${row.edited}, "_xform_id": ${row.form_id}, "_attachments": ${row.attachments ?? '[]'}, ` +
    (row.edited ? `"_last_edited": ${isoMicros(row.edited_us)}, ` : '') +
    `"_media_count": ${row.media_count}, "_total_media": ${row.total_media}, "_submitted_by": ${text(row.submitted_by_name)}, ` +
    `"_date_modified": ${isoMicros(row.modified_us)}, "_last_edited_by": ${text(row.last_edited_by_name)}, ` +
    `"_submission_time": ${isoMicros(row.created_us)}, "_media_all_received": ${row.media_count >= row.total_media}}`;
  return row.json === '{}' ? meta : `${row.json.slice(0, -1)}, ${meta.slice(1)}`;
}
