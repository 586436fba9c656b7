// Merging newly submitted records into a cached match list (match-cache.ts) without asking the
// database to sort every match again: the list keeps each id's numeric sort keys, so a few new
// matches are ordered among themselves and merged in one pass, in the database's order (the keys,
// then id ascending).

export interface AddedMatch {
  id: number;
  /** The record's sort keys, NULL already read as +Infinity. */
  keys: readonly number[];
}

export interface OrderedMatches {
  ids: Int32Array;
  keys: Float64Array[];
}

/** Negative when record a comes before record b. */
function compare(aKeys: (k: number) => number, aId: number, bKeys: (k: number) => number, bId: number, descending: readonly boolean[]): number {
  for (let k = 0; k < descending.length; k++) {
    const a = aKeys(k);
    const b = bKeys(k);
    if (a !== b) return (a < b ? -1 : 1) * (descending[k] ? -1 : 1);
  }
  return aId - bId;
}

export function mergeMatches(list: OrderedMatches, added: readonly AddedMatch[], descending: readonly boolean[]): OrderedMatches {
  const extra = [...added].sort((a, b) => compare((k) => a.keys[k] ?? 0, a.id, (k) => b.keys[k] ?? 0, b.id, descending));
  const total = list.ids.length + extra.length;
  const ids = new Int32Array(total);
  const keys = descending.map(() => new Float64Array(total));
  let from = 0; // next of the old list
  let out = 0;
  const copyOld = (until: number): void => {
    ids.set(list.ids.subarray(from, until), out);
    keys.forEach((target, k) => target.set((list.keys[k] ?? new Float64Array(0)).subarray(from, until), out));
    out += until - from;
    from = until;
  };
  for (const match of extra) {
    // The first old record that comes after this match (binary search: the old list is ordered).
    let low = from;
    let high = list.ids.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const before = compare((k) => list.keys[k]?.[mid] ?? 0, list.ids[mid] ?? 0, (k) => match.keys[k] ?? 0, match.id, descending) < 0;
      if (before) low = mid + 1;
      else high = mid;
    }
    copyOld(low);
    ids[out] = match.id;
    keys.forEach((target, k) => (target[out] = match.keys[k] ?? 0));
    out += 1;
  }
  copyOld(list.ids.length);
  return { ids, keys };
}
