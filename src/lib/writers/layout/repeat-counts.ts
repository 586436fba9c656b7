// The number of items of every repeat in a record, kept with the record when it is stored so that
// flat exports can size their `rep[n]/…` columns from one small column instead of reading every
// stored record first (1,000,000 records: about 1.8 s of the CSV export before its first byte).
//
// Keys are the repeat's record key, then, for a repeat inside repeats, a space and the 1-based
// positions of the enclosing items (`kids/vaccines 2` is the vaccines of the second kid); no
// record key holds a space. A repeat is any array of objects: the same rule, written in SQL,
// counts records stored before this column existed (migrations/0013_repeat_counts.sql), and
// the import's record builder (src/lib/import-rows/row-builder.ts) keys its counts with repeatCountKey.

/** The key of a repeat's count: its record key, and the positions of its enclosing items. */
export function repeatCountKey(repeatKey: string, position: string): string {
  return position === '' ? repeatKey : `${repeatKey} ${position}`;
}

/** The position of item `item` (1-based) of a repeat at `position`. */
export function itemPosition(position: string, item: number): string {
  return position === '' ? String(item) : `${position},${item}`;
}

/** The counts as JSON object text (`{}` for a record without repeats). */
export function repeatCountsOf(record: Readonly<Record<string, unknown>>): string {
  const counts: Record<string, number> = {};
  let found = false;
  const visit = (container: Readonly<Record<string, unknown>>, position: string): void => {
    for (const key in container) {
      const items = container[key];
      if (!Array.isArray(items) || !isObject(items[0])) continue;
      counts[repeatCountKey(key, position)] = items.length;
      found = true;
      for (let i = 0; i < items.length; i++) {
        const item: unknown = items[i];
        if (isObject(item)) visit(item, itemPosition(position, i + 1));
      }
    }
  };
  visit(record, '');
  return found ? JSON.stringify(counts) : '{}';
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a count key back: the repeat's record key and the positions of its enclosing items. */
export function parseRepeatCountKey(key: string): { path: string; indices: number[] } {
  const space = key.indexOf(' ');
  if (space < 0) return { path: key, indices: [] };
  return { path: key.slice(0, space), indices: key.slice(space + 1).split(',').map(Number) };
}
