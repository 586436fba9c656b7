// The table's chosen columns, remembered per form in this browser (localStorage holds no secret).
import type { Field } from './form-fields.ts';

export const META_COLUMNS: ReadonlyArray<{ key: string; label: string }> = [
  { key: '_id', label: 'Record ID' },
  { key: '_submission_time', label: 'Submitted' },
  { key: '_submitted_by', label: 'Submitted by' },
  { key: '_review_status', label: 'Review' },
  { key: '_tags', label: 'Tags' },
  { key: '_date_modified', label: 'Changed' },
  { key: '_uuid', label: 'Instance ID' },
  { key: '_version', label: 'Form version' },
];

const key = (formId: number): string => `gather.data.columns.${formId}`;

export function defaultColumns(fields: readonly Field[]): string[] {
  return [...fields.filter((f) => !f.inRepeat).slice(0, 8).map((f) => f.path), '_submission_time', '_submitted_by', '_review_status'];
}

export function loadColumns(formId: number): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(key(formId)) ?? 'null');
    return Array.isArray(parsed) && parsed.every((c) => typeof c === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function saveColumns(formId: number, columns: readonly string[]): void {
  try {
    localStorage.setItem(key(formId), JSON.stringify(columns));
  } catch {
    // Storage full or refused: the choice lasts for this visit only.
  }
}
