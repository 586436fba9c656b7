// Small accessors for the dict-shaped rows (cells nest under bind, control, media...).
import type { Json, JsonObject } from '../types.ts';

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The nested object at `key`, created when missing (or when a bare value is there). */
export function child(row: JsonObject, key: string): JsonObject {
  const existing = row[key];
  if (isObject(existing)) return existing;
  const created: JsonObject = {};
  row[key] = created;
  return created;
}

export function nested(row: JsonObject, key: string): JsonObject | undefined {
  const value = row[key];
  return isObject(value) ? value : undefined;
}

export function text(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * A shallow copy of a row, as pyxform takes before amending one: nested dicts
 * stay shared, which is safe because the source row is not used afterwards.
 */
export function copyObject(value: JsonObject): JsonObject {
  return { ...value };
}

export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 0; i < a.length; i++) {
    const current = [i + 1];
    for (let j = 0; j < b.length; j++) {
      const substitution = (previous[j] ?? 0) + (a[i] === b[j] ? 0 : 1);
      current.push(Math.min((previous[j + 1] ?? 0) + 1, (current[j] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

const SHEETS = new Set(['survey', 'choices', 'settings', 'external_choices', 'entities', 'osm']);

/** "When looking for a sheet named ..." hint, or undefined when no name is close. */
export function sheetMisspelling(wanted: string, sheetNames: readonly string[]): string | undefined {
  const candidates = sheetNames.filter(
    (n) => levenshtein(n.toLowerCase(), wanted) <= 2 && !SHEETS.has(n) && !n.startsWith('_'),
  );
  if (candidates.length === 0) return undefined;
  return `When looking for a sheet named '${wanted}', the following sheets with similar names were found: ${candidates.map((c) => `'${c}'`).join(', ')}.`;
}

export const SUPPRESS_SPELLING_HINT =
  " If you do not mean to include a sheet, to suppress this message, prefix the sheet name with an underscore. For example 'setting' becomes '_setting'.";

/** Python's repr of a row dict, as pyxform prints it in messages. */
export function pyRepr(value: unknown): string {
  if (typeof value === 'string') return value.includes("'") && !value.includes('"') ? `"${value}"` : `'${value.replaceAll("'", "\\'")}'`;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return 'None';
}
