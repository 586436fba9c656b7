// Excel's rules for sheet names, shared by the XLSX and XLS writers: 1 to 31 characters, none of
// `: \ / ? * [ ]`, no apostrophe at either end, unique without regard to case, and not "History"
// (Excel reserves it).
export const MAX_SHEET_NAME = 31;

const FORBIDDEN = /[:\\/?*[\]\u0000-\u001f]/g;

/** Tracks the names used in one workbook and hands out valid, unique ones. */
export class SheetNames {
  private readonly taken = new Set<string>();

  /** `name` made valid and unique; `name` itself when it already is. */
  claim(name: string): string {
    return this.unique(clean(name), '');
  }

  /** The name of the `part`-th sheet (2, 3, …) that continues `base` past the row limit. */
  continuation(base: string, part: number): string {
    return this.unique(clean(base), ` (${part})`);
  }

  private unique(base: string, suffix: string): string {
    for (let n = 1; ; n += 1) {
      const tail = n === 1 ? suffix : `${suffix}_${n}`;
      const candidate = cut(base, MAX_SHEET_NAME - tail.length) + tail;
      const key = candidate.toLowerCase();
      if (!this.taken.has(key) && key !== 'history') {
        this.taken.add(key);
        return candidate;
      }
    }
  }
}

function clean(name: string): string {
  const replaced = name.replace(FORBIDDEN, '_').replace(/^'+|'+$/g, '');
  return replaced === '' ? 'Sheet' : replaced;
}

/** At most `max` UTF-16 units, never splitting a surrogate pair, no trailing apostrophe. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end).replace(/'+$/, '');
}
