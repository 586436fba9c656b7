// The resumption cursor of submissionList: the id of the last record a page listed, in decimal,
// as onadata writes it. The next page starts after that id (keyset paging), so every page costs
// the same however deep into a form's records it is. Briefcase recognises a plain integer as an
// Ona cursor and compares such cursors as numbers to keep the latest one; an empty cursor (or
// onadata's `0`) starts at the first record.

const MAX_RECORD_ID = 2_147_483_647;

/** `undefined`: start at the first record; a number: list records with a greater id. */
export type ParsedCursor = { readonly ok: true; readonly after: number } | { readonly ok: false; readonly message: string };

export function parseCursor(raw: string | undefined): ParsedCursor {
  const text = (raw ?? '').trim();
  if (text === '') return { ok: true, after: 0 };
  if (!/^\d{1,10}$/.test(text) || Number(text) > MAX_RECORD_ID) {
    return { ok: false, message: `Invalid cursor "${text.slice(0, 40)}": it must be the resumptionCursor of an earlier submissionList answer (a record id).` };
  }
  return { ok: true, after: Number(text) };
}

/** The cursor after a page: its last record's id, or the cursor it was asked with when it is empty. */
export function nextCursor(after: number, pageIds: readonly number[]): string {
  const last = pageIds[pageIds.length - 1];
  return String(last ?? after);
}

/** Briefcase's page size when numEntries is absent or not a positive integer, and the largest allowed. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 10_000;

export type ParsedPageSize = { readonly ok: true; readonly size: number } | { readonly ok: false; readonly message: string };

export function parsePageSize(raw: string | undefined): ParsedPageSize {
  const text = (raw ?? '').trim();
  if (text === '') return { ok: true, size: DEFAULT_PAGE_SIZE };
  if (!/^\d{1,9}$/.test(text) || Number(text) === 0) return { ok: false, message: 'numEntries must be a positive integer.' };
  return { ok: true, size: Math.min(Number(text), MAX_PAGE_SIZE) };
}
