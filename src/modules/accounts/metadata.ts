// Profile metadata helpers.

/** Python's `datetime.isoformat()` for an aware UTC time, as onadata stores `last_password_edit`. */
export function pythonIsoFormat(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Finds the object that holds `key`, searching the top level first, then nested objects. */
function holderOf(tree: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  if (Object.prototype.hasOwnProperty.call(tree, key)) return tree;
  for (const value of Object.values(tree)) {
    if (isObject(value)) {
      const found = holderOf(value, key);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * onadata's `overwrite=false` merge: each new key replaces the value wherever that key already is
 * in the tree (objects on both sides are merged one level deep); unknown keys go to the top level.
 */
export function mergeMetadata(existing: Record<string, unknown>, incoming: Record<string, unknown>): Record<string, unknown> {
  const result = structuredClone(existing);
  for (const [key, value] of Object.entries(incoming)) {
    const holder = holderOf(result, key) ?? result;
    const old = holder[key];
    holder[key] = isObject(old) && isObject(value) ? { ...old, ...value } : value;
  }
  return result;
}
