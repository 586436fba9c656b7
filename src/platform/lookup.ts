// Tables looked up by keys that come from requests or records. A plain object literal answers
// `toString`, `constructor` or `__proto__` with what every object inherits, and `key in table` is
// true for them: these tables have no prototype, so only their own keys are found.

/** A frozen table with no prototype: `table[key]` is undefined for any key it was not given. */
export function lookupTable<V>(entries: Readonly<Record<string, V>>): Readonly<Record<string, V>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, V>, entries));
}

/** The object's own value under `key` (never an inherited one); undefined when it has none. */
export function ownValue<V>(object: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
