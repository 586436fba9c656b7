// Sectioned rows (xlsx sheets, savzip cases) read from stored records' UTF-8 JSON bytes
// (csv/raw-json.ts) instead of records parsed whole: the values the columns read are found in one
// pass over the bytes, and a text answer that needs no change can be copied from them to the
// output without becoming a string. Each column's cell is otherwise its reader's (sections.ts
// ColumnValue) for the value JSON.parse would have made, so the rows are the parsed records' rows.
//
// A repeat's items are read into containers planned per index, up to the largest count the
// records hold (the repeat counts' aggregate); a record with more items than planned, or with
// an item that is not an object, is parsed whole instead (rowsOf), its rows numbered on.
import { NOT_ITEMS, NUMBER, RawRecordReader, TEXT, type RawStep } from '../csv/raw-json.ts';
import type { RowCounters, SectionedLayout, SectionRowBuilder } from './sections.ts';
import type { Cell, ExportRecord } from './types.ts';

/** Where a row's cells go, column by column. */
export interface RawRowOut {
  /** The column holds the string whose UTF-8 bytes (JSON needed no escape in them) are src[start..end). */
  textBytes(column: number, src: Uint8Array, start: number, end: number): void;
  cell(column: number, cell: Cell): void;
}

/** Containers planned at most (the items of nested repeats multiply): past it, records are parsed whole. */
const MAX_CONTAINERS = 4096;

const ITEM = 0;
const ITEM_TEXT = 1;
const ITEM_NUMBER = 2;
const RECORD = 3;
const INDEX = 4;
const PARENT_INDEX = 5;
const PARENT_NAME = 6;

const MINUS = 45;
const ZERO = 48;
const NINE = 57;

/** A row's container: the slot of each column's value in it (-1 for columns that read none). */
interface Leaf {
  readonly slots: Int32Array;
}

/** An array of items at some level of a repeat's chain, and the containers of its items by index. */
interface Branch {
  readonly array: number;
  readonly items: ReadonlyArray<Branch | Leaf>;
}

interface Section {
  readonly ops: Int8Array;
  readonly cells: ReadonlyArray<((value: unknown) => Cell) | undefined>;
  /** The survey's section: its one leaf; a repeat's: the outermost array. */
  readonly root: Branch | Leaf;
  readonly depth: number;
  /** The record keys of the repeats the section's rows are nested in, outermost first. */
  readonly paths: readonly string[];
  readonly parentNames: readonly string[];
  readonly counters: RowCounters;
  readonly builder: SectionRowBuilder;
  /** This record's rows: their containers, `_index` and `_parent_index`. */
  leaves: Leaf[];
  indexes: number[];
  parents: number[];
  count: number;
}

function isLeaf(node: Branch | Leaf): node is Leaf {
  return 'slots' in node;
}

/** The value of an integer written as JSON writes it and JavaScript prints it back (at most 15 digits), else undefined. */
function plainInteger(src: Uint8Array, start: number, end: number): number | undefined {
  const digits = src[start] === MINUS ? start + 1 : start;
  const count = end - digits;
  if (count < 1 || count > 15) return undefined;
  if (src[digits] === ZERO && (count > 1 || digits > start)) return undefined;
  let n = 0;
  for (let i = digits; i < end; i++) {
    const b = src[i] as number;
    if (b < ZERO || b > NINE) return undefined;
    n = n * 10 + (b - ZERO);
  }
  return digits > start ? -n : n;
}

export class RawSections {
  private readonly reader = new RawRecordReader();
  private readonly sections: Section[] = [];
  /** Per given key (in the caller's order): its top-level slot, or -1 when no column reads it. */
  private readonly givenSlots: Int32Array;
  private readonly topSlots = new Map<string, number>();
  private src: Uint8Array = new Uint8Array(0);
  private memo: unknown[] = [];
  private memoOf = new Int32Array(0);
  private pass = 0;
  private readonly saved: number[] = [];

  private constructor(layout: SectionedLayout, largest: (repeatPath: string) => number, givenKeys: readonly string[]) {
    let planned = 0;
    for (const section of layout.sections) {
      const { paths, parentNames } = layout.chainOf(section);
      const columns = section.columns;
      const ops = new Int8Array(columns.length);
      const cells: Array<((value: unknown) => Cell) | undefined> = [];
      columns.forEach((column, i) => {
        const value = column.value;
        if (!value) throw new Error('a column without a value rule');
        if (value.from === 'item') ops[i] = value.plain === 'text' ? ITEM_TEXT : value.plain === 'number' ? ITEM_NUMBER : ITEM;
        else if (value.from === 'record') ops[i] = RECORD;
        else ops[i] = value.from === 'index' ? INDEX : value.from === 'parent-index' ? PARENT_INDEX : PARENT_NAME;
        cells.push(value.from === 'item' || value.from === 'record' ? value.cell : undefined);
      });
      const leaf = (steps: readonly RawStep[]): Leaf => {
        planned += 1;
        if (planned > MAX_CONTAINERS) throw new TooManyContainers();
        const slots = new Int32Array(columns.length).fill(-1);
        columns.forEach((column, i) => {
          const value = column.value;
          if (value?.from === 'item') slots[i] = this.slot(steps, value.key);
          else if (value?.from === 'record' && steps.length === 0) slots[i] = this.slot([], value.key);
        });
        return { slots };
      };
      const branch = (steps: readonly RawStep[], level: number): Branch => {
        const key = paths[level] as string;
        const array = this.reader.arraySlot(steps, key);
        const items: Array<Branch | Leaf> = [];
        for (let index = 0; index < largest(key); index++) {
          const inner = [...steps, { key, index }];
          items.push(level === paths.length - 1 ? leaf(inner) : branch(inner, level + 1));
        }
        return { array, items };
      };
      const counters: RowCounters = { main: 0, levels: paths.map(() => 0) };
      this.sections.push({
        ops,
        cells,
        root: paths.length === 0 ? leaf([]) : branch([], 0),
        depth: paths.length,
        paths,
        parentNames,
        counters,
        builder: layout.rowBuilder(section, counters),
        leaves: [],
        indexes: [],
        parents: [],
        count: 0,
      });
    }
    this.givenSlots = Int32Array.from(givenKeys, (key) => this.topSlots.get(key) ?? -1);
  }

  /**
   * The reader of a layout's rows from stored bytes, or undefined when a column needs more than
   * its value (media links) or the repeats' items would need too many containers.
   * `largest`: the most items a repeat has in any record; `givenKeys`: the record's keys whose
   * values the caller gives per record (they win over the stored ones).
   */
  static plan(layout: SectionedLayout, largest: (repeatPath: string) => number, givenKeys: readonly string[]): RawSections | undefined {
    if (layout.sections.some((section) => section.columns.some((column) => column.value === undefined))) return undefined;
    try {
      return new RawSections(layout, largest, givenKeys);
    } catch (error) {
      if (error instanceof TooManyContainers) return undefined;
      throw error;
    }
  }

  private slot(steps: readonly RawStep[], key: string): number {
    const slot = this.reader.slot(steps, key);
    if (steps.length === 0) this.topSlots.set(key, slot);
    if (slot >= this.memoOf.length) {
      const grown = new Int32Array(Math.max(64, (slot + 1) * 2));
      grown.set(this.memoOf);
      this.memoOf = grown;
    }
    return slot;
  }

  /**
   * Reads the record in src[start..end) (`given`: a value per given key, in their order): true
   * when its rows are ready (rowCount, writeRow); false when it must be parsed whole (rowsOf).
   */
  read(src: Uint8Array, start: number, end: number, given: readonly unknown[]): boolean {
    const reader = this.reader;
    reader.read(src, start, end);
    this.src = src;
    this.pass += 1;
    const givenSlots = this.givenSlots;
    for (let i = 0; i < givenSlots.length; i++) {
      const slot = givenSlots[i] as number;
      if (slot >= 0) reader.setGiven(slot, given[i]);
    }
    const saved = this.saved;
    saved.length = 0;
    for (const section of this.sections) {
      saved.push(section.counters.main, ...section.counters.levels);
      section.count = 0;
      section.counters.main += 1;
      if (section.depth === 0) this.add(section, section.root as Leaf, section.counters.main, -1);
      else if (!this.visit(section, section.root as Branch, 0, section.counters.main)) {
        // Counted again when the record's rows are built from it parsed.
        let at = 0;
        for (const s of this.sections) {
          if (at >= saved.length) break;
          s.counters.main = saved[at++] as number;
          for (let level = 0; level < s.counters.levels.length; level++) s.counters.levels[level] = saved[at++] as number;
        }
        return false;
      }
    }
    return true;
  }

  private add(section: Section, leaf: Leaf, index: number, parent: number): void {
    const at = section.count++;
    section.leaves[at] = leaf;
    section.indexes[at] = index;
    section.parents[at] = parent;
  }

  /** Notes the rows under `branch`; false when its items were not all read. */
  private visit(section: Section, branch: Branch, level: number, parentIndex: number): boolean {
    const reader = this.reader;
    const count = reader.countOf[branch.array] as number;
    if (count === NOT_ITEMS) {
      // No rows unless the value is an array whose items were not all read.
      return !reader.holdsArray(branch.array);
    }
    const levels = section.counters.levels;
    for (let i = 0; i < count; i++) {
      const node = branch.items[i] as Branch | Leaf;
      const index = ((levels[level] as number) += 1);
      if (isLeaf(node)) this.add(section, node, index, parentIndex);
      else if (!this.visit(section, node, level + 1, index)) return false;
    }
    return true;
  }

  /** The number of rows the record read last has in section `section`. */
  rowCount(section: number): number {
    return (this.sections[section] as Section).count;
  }

  /** Writes row `k` of the record read last in section `section`, cell by cell. */
  writeRow(section: number, k: number, out: RawRowOut): void {
    const s = this.sections[section] as Section;
    const slots = (s.leaves[k] as Leaf).slots;
    const repeat = s.depth > 0;
    const reader = this.reader;
    const src = this.src;
    const ops = s.ops;
    for (let i = 0; i < ops.length; i++) {
      switch (ops[i]) {
        case ITEM_TEXT: {
          const slot = slots[i] as number;
          if (reader.kindOf[slot] === TEXT) out.textBytes(i, src, reader.startOf[slot] as number, reader.endOf[slot] as number);
          else out.cell(i, (s.cells[i] as (value: unknown) => Cell)(this.value(slot)));
          break;
        }
        case ITEM_NUMBER: {
          const slot = slots[i] as number;
          const n = reader.kindOf[slot] === NUMBER ? plainInteger(src, reader.startOf[slot] as number, reader.endOf[slot] as number) : undefined;
          out.cell(i, n ?? (s.cells[i] as (value: unknown) => Cell)(this.value(slot)));
          break;
        }
        case ITEM:
          out.cell(i, (s.cells[i] as (value: unknown) => Cell)(this.value(slots[i] as number)));
          break;
        case RECORD:
          out.cell(i, repeat ? null : (s.cells[i] as (value: unknown) => Cell)(this.value(slots[i] as number)));
          break;
        case INDEX:
          out.cell(i, s.indexes[k] as number);
          break;
        case PARENT_INDEX:
          out.cell(i, repeat ? (s.parents[k] as number) : -1);
          break;
        case PARENT_NAME:
          out.cell(i, repeat ? (s.parentNames[s.depth - 1] ?? '') : null);
          break;
      }
    }
  }

  /** A slot's value as JSON.parse would have made it, made once per record. */
  private value(slot: number): unknown {
    if (this.memoOf[slot] === this.pass) return this.memo[slot];
    const value = this.reader.value(slot);
    this.memoOf[slot] = this.pass;
    this.memo[slot] = value;
    return value;
  }

  /**
   * Every section's `_index` counters, flattened (per section its records', then each level's
   * items'): where the rows of the records read so far leave off.
   */
  counterState(): number[] {
    const state: number[] = [];
    for (const section of this.sections) state.push(section.counters.main, ...section.counters.levels);
    return state;
  }

  /** Sets the counters to a counterState(): the next record's rows follow on from it. */
  setCounterState(state: readonly number[]): void {
    let at = 0;
    for (const section of this.sections) {
      section.counters.main = state[at++] ?? 0;
      for (let level = 0; level < section.counters.levels.length; level++) section.counters.levels[level] = state[at++] ?? 0;
    }
  }

  /** Per section, the rows the records read so far have, by a counterState(): records for the survey, the innermost repeat's items for a repeat. */
  rowTotals(state: readonly number[]): number[] {
    const rows: number[] = [];
    let at = 0;
    for (const section of this.sections) {
      rows.push(state[at + section.depth] ?? 0);
      at += 1 + section.depth;
    }
    return rows;
  }

  /**
   * The counterState() after `records` more records holding `items(path)` items of each repeat
   * (by the repeat's record key, at every position): what the records' stored repeat counts
   * predict, before they are read.
   */
  stateAfter(state: readonly number[], records: number, items: (repeatPath: string) => number): number[] {
    const next = [...state];
    let at = 0;
    for (const section of this.sections) {
      next[at] = (next[at] ?? 0) + records;
      section.paths.forEach((path, level) => {
        next[at + 1 + level] = (next[at + 1 + level] ?? 0) + items(path);
      });
      at += 1 + section.depth;
    }
    return next;
  }

  /** The record keys of the repeats whose items the sections' counters count. */
  repeatPaths(): string[] {
    return [...new Set(this.sections.flatMap((section) => section.paths))];
  }

  /** The rows of each section of a record that read() refused, parsed whole; its `_index` counters go on. */
  rowsOf(record: ExportRecord): Cell[][][] {
    return this.sections.map((section) => section.builder.rows(record));
  }
}

class TooManyContainers extends Error {}

