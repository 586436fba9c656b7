// Text as SpreadsheetML stores it. XML 1.0 cannot carry most control characters, and parsers turn
// CR into LF, so those are written the way Excel writes them, as `_xHHHH_`; a literal `_xHHHH_`
// in the data then needs its underscore escaped (`_x005F_`) to survive. Lone surrogates and the
// non-characters U+FFFE/U+FFFF become U+FFFD.

/** Excel's limit on the characters in one cell. */
export const MAX_CELL_CHARS = 32_767;

// The quick test also matches surrogate pairs (no u flag: much faster); the replacement, with the
// u flag, leaves pairs alone.
const MAYBE_SPECIAL = /[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff\ud800-\udfff]|_x[0-9A-Fa-f]{4}_/;
const SPECIAL_ALL = new RegExp(MAYBE_SPECIAL.source, 'gu');

function replace(match: string): string {
  switch (match) {
    case '&':
      return '&amp;';
    case '<':
      return '&lt;';
    case '>':
      return '&gt;';
    default: {
      if (match.length === 7) return `_x005F${match}`;
      const code = match.charCodeAt(0);
      if (code >= 0xd800 || code === 0xfffe || code === 0xffff) return '\ufffd';
      return `_x${code.toString(16).toUpperCase().padStart(4, '0')}_`;
    }
  }
}

/** Escaped for element content. */
export function escapeText(text: string): string {
  return MAYBE_SPECIAL.test(text) ? text.replace(SPECIAL_ALL, replace) : text;
}

/** Escaped for a double-quoted attribute value. */
export function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;').replace(/[\t\n]/g, (c) => (c === '\t' ? '&#9;' : '&#10;'));
}

/** At most `max` UTF-16 units, never splitting a surrogate pair. */
export function truncateCell(text: string, max = MAX_CELL_CHARS): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** Whether XML would lose the string's leading or trailing whitespace without xml:space. */
export function needsPreserve(text: string): boolean {
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  return first <= 32 || last <= 32;
}
