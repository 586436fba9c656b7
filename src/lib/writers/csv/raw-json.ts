// A stored record read as UTF-8 JSON bytes without parsing it into objects: one pass over the
// bytes notes where the values that a layout's columns read begin and end (their slots). For
// 1,000,000 bench records JSON.parse was the largest single cost of a CSV export (about 6.4 s of
// CPU, with the garbage collections of the objects it made); this pass makes no object per value.
//
// The bytes are a record's `json_text`, which PostgreSQL writes from the stored jsonb (migration
// 0010), so they are valid JSON with unique keys and a value is found once; bytes that are not
// JSON still raise an error where the pass notices it.

/** What a slot holds after a pass. */
export const MISSING = 0;
/** A string with no escape: its text is the bytes between the quotes (start..end). */
export const TEXT = 1;
/** A string with escapes (start..end are inside its quotes). */
export const ESCAPED = 2;
/** A number, as written (start..end). */
export const NUMBER = 3;
/** true, false, null, an array or an object, as written (start..end). */
export const OTHER = 4;
/** A value given by the caller (setGiven), not read from the bytes. */
export const GIVEN = 5;
/** countOf: the slot holds no array whose items were all read. */
export const NOT_ITEMS = -1;

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const SPACE = 32;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;

function fnv(bytes: Uint8Array): number {
  let hash = FNV_OFFSET;
  for (const b of bytes) hash = Math.imul(hash ^ b, FNV_PRIME);
  return hash;
}

function malformed(at: number): Error {
  return new Error(`stored record is not valid JSON near byte ${at}`);
}

/** Keys met that no column reads are remembered up to this many per kind of container. */
const MAX_OTHER_KEYS = 4096;

/**
 * The keys of one kind of container (the record, or the items of a repeat), found by their UTF-8
 * bytes: the keys the columns read (ids first), and others met in records, up to MAX_OTHER_KEYS.
 * The records of a form mostly hold their keys in one order, so each key is first compared with
 * the one that followed the previous key last time (`after`): a match costs a comparison of its
 * bytes, not a hash and a comparison.
 */
class KeyTable {
  readonly keys: string[] = [];
  /** Per id: the key's bytes. */
  readonly bytes: Uint8Array[] = [];
  /** Per id: whether its bytes may be compared as written (no quote or backslash in them). */
  readonly plain: boolean[] = [];
  /** Per id: its bytes four at a time, as little-endian 32-bit integers (a last part shorter than four left out). */
  readonly words: Int32Array[] = [];
  /** Per id: the id of the key that followed it last time, or -1; `first`: the first key's. */
  after = new Int32Array(0);
  first = -1;
  private readonly ids = new Map<string, number>();
  /** Open addressing by FNV-1a hash: key id + 1, 0 where empty. */
  private table = new Int32Array(0);
  private mask = 0;
  private sealed = false;

  id(key: string): number {
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.keys.length;
    const bytes = new TextEncoder().encode(key);
    this.keys.push(key);
    this.bytes.push(bytes);
    this.plain.push(!bytes.includes(QUOTE) && !bytes.includes(BACKSLASH));
    const words = new Int32Array(bytes.length >> 2);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let w = 0; w < words.length; w++) words[w] = view.getInt32(w * 4, true);
    this.words.push(words);
    this.ids.set(key, id);
    if (this.sealed) {
      if (this.after.length < this.keys.length) {
        const after = new Int32Array(this.after.length * 2).fill(-1);
        after.set(this.after);
        this.after = after;
      }
      if (this.keys.length * 2 > this.table.length) this.rehash();
      else this.place(id);
    }
    return id;
  }

  seal(): void {
    this.sealed = true;
    this.after = new Int32Array(Math.max(16, this.keys.length * 2)).fill(-1);
    this.rehash();
  }

  private rehash(): void {
    let size = 16;
    while (size < this.keys.length * 4) size *= 2;
    this.table = new Int32Array(size);
    this.mask = size - 1;
    for (let id = 0; id < this.keys.length; id++) this.place(id);
  }

  private place(id: number): void {
    let at = fnv(this.bytes[id] as Uint8Array) & this.mask;
    while (this.table[at] !== 0) at = (at + 1) & this.mask;
    this.table[at] = id + 1;
  }

  /**
   * Whether key `id` is written at src[start..) followed by its closing quote (`view`: src's bytes).
   * Compared four bytes at a time: the keys met are mostly the ones predicted, and their bytes
   * were the largest part of a record's pass.
   */
  at(id: number, src: Uint8Array, view: DataView, start: number): boolean {
    if (!this.plain[id]) return false;
    const bytes = this.bytes[id] as Uint8Array;
    const length = bytes.length;
    if (src[start + length] !== QUOTE) return false;
    const words = this.words[id] as Int32Array;
    const whole = words.length;
    for (let w = 0; w < whole; w++) if (view.getInt32(start + w * 4, true) !== words[w]) return false;
    for (let i = whole * 4; i < length; i++) if (bytes[i] !== src[start + i]) return false;
    return true;
  }

  /** The id of the key whose bytes are src[start..end) (hash: their FNV-1a); a key not met before is added while there is room, else -1. */
  find(src: Uint8Array, start: number, end: number, hash: number): number {
    const length = end - start;
    for (let at = hash & this.mask; ; at = (at + 1) & this.mask) {
      const entry = this.table[at] as number;
      if (entry === 0) break;
      const bytes = this.bytes[entry - 1] as Uint8Array;
      if (bytes.length !== length) continue;
      let i = 0;
      while (i < length && bytes[i] === src[start + i]) i++;
      if (i === length) return entry - 1;
    }
    if (this.keys.length >= MAX_OTHER_KEYS) return -1;
    return this.id(Buffer.from(src.buffer, src.byteOffset, src.byteLength).toString('utf8', start, end));
  }

  findText(key: string): number {
    return this.ids.get(key) ?? (this.keys.length < MAX_OTHER_KEYS ? this.id(key) : -1);
  }
}

/** One container a pass may fill: the record, or one item of a repeat (by its steps from the record). */
interface Container {
  readonly keys: KeyTable;
  /** Per key id: the slot of the key's value here, or -1. */
  readonly slots: number[];
  /** Per key id: the containers of the key's items by index (-1 where not read), or undefined. */
  readonly items: (number[] | undefined)[];
}

/** A step into a repeat's item: `container[key][index]`. */
export interface RawStep {
  readonly key: string;
  readonly index: number;
}

/**
 * Where the values that a layout reads are found in a record. Slots are asked for before the
 * first pass (slot), which seals the plan.
 */
export class RawRecordReader {
  private readonly kinds = new Map<string, KeyTable>();
  private readonly containers: Container[] = [];
  private readonly containerIds = new Map<string, number>();
  private slotCount = 0;
  private sealed = false;
  private src: Uint8Array = new Uint8Array(0);
  /** src's bytes as a DataView (made again when src changes). */
  private view: DataView = new DataView(new ArrayBuffer(0));
  private end = 0;
  /** Per slot, after a pass: its kind (MISSING, TEXT…) and the span of its value in the bytes. */
  kindOf = new Uint8Array(0);
  startOf = new Int32Array(0);
  endOf = new Int32Array(0);
  /**
   * Per slot asked for by arraySlot, after a pass: the number of items of the array it holds, or
   * NOT_ITEMS when it holds no array or an array whose items are not all objects with a
   * container each (more items than were planned for).
   */
  countOf = new Int32Array(0);
  /** Set by items(): whether every item had a container and was an object. */
  private itemsRead = true;
  private given: unknown[] = [];

  constructor() {
    this.container([]);
  }

  private container(steps: readonly RawStep[]): number {
    const id = JSON.stringify(steps);
    const known = this.containerIds.get(id);
    if (known !== undefined) return known;
    const kindKey = JSON.stringify(steps.map((s) => s.key));
    let keys = this.kinds.get(kindKey);
    if (!keys) {
      keys = new KeyTable();
      this.kinds.set(kindKey, keys);
    }
    if (steps.length > 0) {
      const step = steps[steps.length - 1] as RawStep;
      if (!Number.isSafeInteger(step.index) || step.index < 0) throw new Error(`not an item index: ${step.index}`);
      const parent = this.containers[this.container(steps.slice(0, -1))] as Container;
      const keyId = parent.keys.id(step.key);
      const items = (parent.items[keyId] ??= []);
      while (items.length <= step.index) items.push(-1);
      items[step.index] = this.containers.length;
    }
    const created = this.containers.length;
    this.containers.push({ keys, slots: [], items: [] });
    this.containerIds.set(id, created);
    return created;
  }

  /** The slot of the value under `key` in the container `steps` lead to (the same slot when asked again). */
  slot(steps: readonly RawStep[], key: string): number {
    if (this.sealed) throw new Error('slots are asked for before the first pass');
    const container = this.containers[this.container(steps)] as Container;
    const keyId = container.keys.id(key);
    const known = container.slots[keyId];
    if (known !== undefined && known >= 0) return known;
    container.slots[keyId] = this.slotCount;
    this.slotCount += 1;
    return this.slotCount - 1;
  }

  /**
   * The slot of the array under `key` in the container `steps` lead to, whose item count a pass
   * notes in countOf; its items' containers are those asked for with steps through `key`.
   */
  arraySlot(steps: readonly RawStep[], key: string): number {
    const slot = this.slot(steps, key);
    const container = this.containers[this.container(steps)] as Container;
    container.items[container.keys.id(key)] ??= [];
    this.arraySlots.push(slot);
    return slot;
  }

  private readonly arraySlots: number[] = [];

  private seal(): void {
    this.sealed = true;
    for (const keys of this.kinds.values()) keys.seal();
    for (const container of this.containers) {
      for (let id = 0; id < container.keys.keys.length; id++) {
        container.slots[id] ??= -1;
        container.items[id] ??= undefined;
      }
    }
    this.kindOf = new Uint8Array(this.slotCount);
    this.startOf = new Int32Array(this.slotCount);
    this.endOf = new Int32Array(this.slotCount);
    this.countOf = new Int32Array(this.slotCount);
    this.given = new Array<unknown>(this.slotCount).fill(undefined);
  }

  /** Notes the values of the record in src[start..end). */
  read(src: Uint8Array, start: number, end: number): void {
    if (!this.sealed) this.seal();
    if (src !== this.src) {
      this.src = src;
      this.view = new DataView(src.buffer, src.byteOffset, src.byteLength);
    }
    this.end = end;
    this.kindOf.fill(MISSING);
    const arrays = this.arraySlots;
    for (let i = 0; i < arrays.length; i++) this.countOf[arrays[i] as number] = NOT_ITEMS;
    const at = this.space(start);
    if (src[at] !== OPEN_BRACE) throw malformed(at);
    this.object(at, 0);
  }

  /** Gives a slot a value of the caller's (a record's meta values from its row); it wins over the bytes. */
  setGiven(slot: number, value: unknown): void {
    this.kindOf[slot] = GIVEN;
    this.given[slot] = value;
  }

  /** Whether the slot holds an array (its items read or not) after the last pass. */
  holdsArray(slot: number): boolean {
    return this.kindOf[slot] === OTHER && this.src[this.startOf[slot] as number] === OPEN_BRACKET;
  }

  /** A slot's value as JSON.parse would have made it (undefined when missing). */
  value(slot: number): unknown {
    const kind = this.kindOf[slot];
    if (kind === MISSING) return undefined;
    if (kind === GIVEN) return this.given[slot];
    const text = Buffer.from(this.src.buffer, this.src.byteOffset, this.src.byteLength);
    const start = this.startOf[slot] as number;
    const end = this.endOf[slot] as number;
    if (kind === TEXT) return text.toString('utf8', start, end);
    if (kind === ESCAPED) return JSON.parse(text.toString('utf8', start - 1, end + 1)) as unknown;
    return JSON.parse(text.toString('utf8', start, end)) as unknown;
  }

  private space(at: number): number {
    const src = this.src;
    let b = src[at];
    while (b === SPACE || b === 10 || b === 13 || b === 9) b = src[++at];
    return at;
  }

  /**
   * The first of src[at..end) that may be a quote or a backslash, four bytes at a time (a word with
   * neither is passed over whole); `end` where there is none.
   */
  private plainRun(at: number, end: number): number {
    const view = this.view;
    let i = at;
    while (i + 4 <= end) {
      const word = view.getInt32(i, true);
      const quote = word ^ 0x22222222;
      const backslash = word ^ 0x5c5c5c5c;
      // A byte of zero in either (the word held a quote or a backslash there) sets its top bit.
      if ((((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080) return i;
      i += 4;
    }
    return i;
  }

  /** The end of the string whose opening quote is at `at` (after its closing quote). */
  private skipString(at: number): number {
    const src = this.src;
    const end = this.end;
    let i = this.plainRun(at + 1, end);
    while (i < end) {
      const b = src[i];
      if (b === QUOTE) return i + 1;
      i += b === BACKSLASH ? 2 : 1;
    }
    throw malformed(at);
  }

  /** The end of the value at `at`, whatever it is. */
  private skip(at: number): number {
    const src = this.src;
    const end = this.end;
    const first = src[at];
    if (first === QUOTE) return this.skipString(at);
    if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      let depth = 0;
      let i = at;
      while (i < end) {
        const b = src[i];
        if (b === QUOTE) {
          i = this.skipString(i);
          continue;
        }
        if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
        else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
          depth--;
          if (depth === 0) return i + 1;
        }
        i++;
      }
      throw malformed(at);
    }
    // A number, true, false or null: up to the next delimiter.
    let i = at;
    while (i < end) {
      const b = src[i];
      if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || b === 32 || b === 10 || b === 13 || b === 9) break;
      i++;
    }
    if (i === at) throw malformed(at);
    return i;
  }

  /** Notes the value at `at` in `slot`; returns its end. */
  private note(at: number, slot: number): number {
    const src = this.src;
    const first = src[at] as number;
    if (first === QUOTE) {
      const end = this.end;
      let escaped = false;
      let i = this.plainRun(at + 1, end);
      while (i < end) {
        const b = src[i];
        if (b === QUOTE) break;
        if (b === BACKSLASH) {
          escaped = true;
          i += 2;
        } else i++;
      }
      if (i >= end) throw malformed(at);
      this.kindOf[slot] = escaped ? ESCAPED : TEXT;
      this.startOf[slot] = at + 1;
      this.endOf[slot] = i;
      return i + 1;
    }
    const end = this.skip(at);
    this.kindOf[slot] = first === 45 || (first >= 48 && first <= 57) ? NUMBER : OTHER;
    this.startOf[slot] = at;
    this.endOf[slot] = end;
    return end;
  }

  /** Reads the object at `at` (its `{`) into container `c`; returns its end. */
  private object(at: number, c: number): number {
    const src = this.src;
    const end = this.end;
    const container = this.containers[c] as Container;
    let i = this.space(at + 1);
    if (src[i] === CLOSE_BRACE) return i + 1;
    const keys = container.keys;
    const slots = container.slots;
    let previous = -1;
    for (;;) {
      if (src[i] !== QUOTE) throw malformed(i);
      const predicted = previous < 0 ? keys.first : (keys.after[previous] as number);
      let keyId: number;
      let k: number;
      if (predicted >= 0 && keys.at(predicted, src, this.view, i + 1)) {
        keyId = predicted;
        k = i + 1 + (keys.bytes[predicted] as Uint8Array).length;
      } else {
        let hash = FNV_OFFSET;
        let escaped = false;
        k = i + 1;
        while (k < end) {
          const b = src[k] as number;
          if (b === QUOTE) break;
          if (b === BACKSLASH) {
            escaped = true;
            k += 2;
            continue;
          }
          hash = Math.imul(hash ^ b, FNV_PRIME);
          k++;
        }
        if (k >= end) throw malformed(i);
        keyId = escaped ? keys.findText(JSON.parse(Buffer.from(src.buffer, src.byteOffset, src.byteLength).toString('utf8', i, k + 1)) as string) : keys.find(src, i + 1, k, hash);
        if (keyId >= 0) {
          if (previous < 0) keys.first = keyId;
          else keys.after[previous] = keyId;
        }
      }
      previous = keyId;
      // PostgreSQL writes the colon right after a key.
      if (src[k + 1] === COLON) i = this.space(k + 2);
      else {
        i = this.space(k + 1);
        if (src[i] !== COLON) throw malformed(i);
        i = this.space(i + 1);
      }
      if (keyId < 0 || keyId >= slots.length) i = this.skip(i);
      else {
        const slot = slots[keyId] as number;
        const items = container.items[keyId];
        if (items !== undefined && src[i] === OPEN_BRACKET) {
          const from = i;
          // Nested arrays are read inside: the enclosing array's flag waits meanwhile.
          const enclosing = this.itemsRead;
          this.itemsRead = true;
          const count = this.items(i, items);
          const read = this.itemsRead;
          this.itemsRead = enclosing;
          i = this.itemsEnd;
          if (slot >= 0) {
            this.kindOf[slot] = OTHER;
            this.startOf[slot] = from;
            this.endOf[slot] = i;
            this.countOf[slot] = read ? count : NOT_ITEMS;
          }
        } else i = slot >= 0 ? this.note(i, slot) : this.skip(i);
      }
      // And `, ` between members: the next key's quote follows.
      if (src[i] === COMMA && src[i + 1] === SPACE && src[i + 2] === QUOTE) {
        i += 2;
        continue;
      }
      i = this.space(i);
      const b = src[i];
      if (b === COMMA) i = this.space(i + 1);
      else if (b === CLOSE_BRACE) return i + 1;
      else throw malformed(i);
    }
  }

  /** Where the array items() read last ends. */
  private itemsEnd = 0;

  /**
   * Reads the array at `at` (its `[`), each object item into its container; returns the number of
   * items, its end in itemsEnd. Clears itemsRead when an item is not an object or has no container.
   */
  private items(at: number, containers: readonly number[]): number {
    const src = this.src;
    let i = this.space(at + 1);
    if (src[i] === CLOSE_BRACKET) {
      this.itemsEnd = i + 1;
      return 0;
    }
    for (let index = 0; ; index++) {
      const c = index < containers.length ? (containers[index] as number) : -1;
      if (c >= 0 && src[i] === OPEN_BRACE) i = this.object(i, c);
      else {
        this.itemsRead = false;
        i = this.skip(i);
      }
      i = this.space(i);
      const b = src[i];
      if (b === COMMA) i = this.space(i + 1);
      else if (b === CLOSE_BRACKET) {
        this.itemsEnd = i + 1;
        return index + 1;
      } else throw malformed(i);
    }
  }
}
