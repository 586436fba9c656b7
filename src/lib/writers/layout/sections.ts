// The sectioned layout (xlsx/xls sheets, csvzip and savzip files, §3.3–3.5): one section for
// the survey and one per repeat, rows linked by `_index`, `_parent_index` and
// `_parent_table_name`. A select_multiple keeps its own column followed by its choice
// columns; a geopoint is followed by its four parts; missing values are empty cells; cells
// are typed (numbers for int and decimal answers, dates for date answers). Text is protected
// against formula injection only where the format asks for it (csvzip; not xlsx, xls, savzip).
import { labelText, repeatAncestors, sectionQuestions, type Choice, type FormModel, type FormQuestion, type FormSection } from '../../form-model/model.ts';
import { REVIEW_COLUMNS } from './flat.ts';
import { sheetNames } from './sheet-names.ts';
import type { Cell, CellText, ExportRecord, LayoutOptions, LinkContext } from './types.ts';
import { isExportDate } from './types.ts';
import { asAnswered, cellTextRule, choiceLabel, choiceLabels, geopointPartPath, mediaValue, pythonFloat, type LabelContext } from './values.ts';

/** onadata's EXTRA_FIELDS for sectioned exports, with `_last_edited_by` (§3.3). */
export const SECTION_EXTRA_COLUMNS = [
  '_id', '_uuid', '_submission_time', '_index', '_parent_table_name', '_parent_index',
  '_tags', '_notes', '_version', '_duration', '_submitted_by', '_last_edited_by',
] as const;

type Container = Readonly<Record<string, unknown>>;

/** Where a row's values come from: the record, or one item of a repeat. */
interface RowSource {
  readonly container: Container;
  readonly record: ExportRecord;
  /** Set on repeat rows only; main rows read their meta from the record. */
  readonly link: { index: number; parentIndex: number; parentName: string } | undefined;
  readonly mainIndex: number;
}

export type SectionColumnKind = 'question' | 'choice' | 'geopoint-part' | 'osm-tag' | 'extra';

export interface SectionColumn {
  /** Header as written (after remove_group_name and group_delimiter). */
  readonly header: string;
  readonly label: string;
  readonly hxl: string;
  readonly kind: SectionColumnKind;
  /** The question a question, choice or geopoint-part column belongs to. */
  readonly question: FormQuestion | undefined;
  readonly choice: Choice | undefined;
  /** For extras: the meta key (`_id`, `_index`…). */
  readonly key: string | undefined;
  /** How a number in this column prints as text: floats keep `.0` (Python's str). */
  readonly number: 'int' | 'float' | undefined;
  readonly read: (source: RowSource) => Cell;
  /**
   * The same cell from one stored value, for readers of the stored records' bytes
   * (raw-sections.ts); undefined when the cell needs more than that value (media links).
   */
  readonly value: ColumnValue | undefined;
}

/**
 * Where a column's cell comes from, for readers that find values in the stored bytes themselves:
 * - 'item': `cell(container[key])`, the container being the record on the survey's rows and the
 *   repeat's item on a repeat's rows; `plain` when every string is written as it is (`text`), an
 *   integer of an int or decimal column as the number (`number`);
 * - 'record': `cell(record[key])` on the survey's rows, null on a repeat's;
 * - 'index', 'parent-index', 'parent-name': the row's `_index`, `_parent_index` and
 *   `_parent_table_name`.
 */
export type ColumnValue =
  | { readonly from: 'item'; readonly key: string; readonly cell: (value: unknown) => Cell; readonly plain: 'text' | 'number' | undefined }
  | { readonly from: 'record'; readonly key: string; readonly cell: (value: unknown) => Cell }
  | { readonly from: 'index' | 'parent-index' | 'parent-name' };

export interface SectionLayout {
  /** The section's path (`children/cartoons`); the survey's section is named after the id_string. */
  readonly name: string;
  /** Excel sheet title (unique, at most 31 characters). */
  readonly sheetName: string;
  /** File name without extension in csvzip/savzip: the name with `/` → `_`. */
  readonly fileName: string;
  readonly repeat: FormSection | undefined;
  readonly columns: readonly SectionColumn[];
  readonly headerRows: readonly (readonly string[])[];
}

export interface SectionedLayout {
  readonly sections: readonly SectionLayout[];
  /**
   * A row builder for one section: its running `_index` counters start at 1, or go on from
   * `counters` (shared with another reader of the same rows).
   */
  rowBuilder(section: SectionLayout, counters?: RowCounters): SectionRowBuilder;
  /** The repeats a section's rows are nested in, outermost first (none for the survey), and what each level's rows name as their parent. */
  chainOf(section: SectionLayout): { readonly paths: readonly string[]; readonly parentNames: readonly string[] };
}

/** The running `_index` counters of a section's rows: the survey's, and one per level of repeats. */
export interface RowCounters {
  main: number;
  readonly levels: number[];
}

export interface SectionRowBuilder {
  /** The rows one record contributes to this section (one for the survey, one per repeat item). */
  rows(record: ExportRecord): Cell[][];
}

export interface SectionedOptions {
  /** What `_parent_table_name` holds: the parent's sheet title (xlsx/xls) or its path (csvzip). */
  readonly parentNames: 'sheet' | 'path';
  /** Whether text is protected against formula injection (csvzip) or written as answered. */
  readonly cellText: CellText;
}

/** How a text value is written: the format's CellText rule. */
type TextRule = (value: string) => string;

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function intValue(value: unknown, text: TextRule): Cell {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value.trim())) return Number.parseInt(value, 10);
  return typeof value === 'string' ? text(value) : null;
}

function floatValue(value: unknown, text: TextRule): Cell {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return typeof value === 'string' ? text(value) : null;
}

function dateValue(value: unknown, text: TextRule): Cell {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value))) return { kind: 'date', iso: value };
  return typeof value === 'string' ? text(value) : null;
}

function metaValue(value: unknown, text: TextRule): Cell {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return text(value);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  return text(JSON.stringify(value));
}

class SectionPlanner {
  private readonly labels: LabelContext;

  constructor(
    private readonly form: FormModel,
    private readonly options: LayoutOptions,
    private readonly links: LinkContext,
    private readonly text: TextRule,
  ) {
    this.labels = { language: options.language, defaultLanguage: form.defaultLanguage };
  }

  private display(raw: string, short: string): string {
    const name = this.options.removeGroupName ? short : raw;
    return this.options.groupDelimiter === '/' ? name : name.split('/').join(this.options.groupDelimiter);
  }

  /**
   * A question column's cell from its answer, its branches chosen once: readers run for every
   * cell of an export, and a decision made per cell cost more than the value it read. undefined
   * for media links, which need the record's attachments too (mediaReader).
   */
  private answerCell(q: FormQuestion): ((value: unknown) => Cell) | undefined {
    const text = this.text;
    if (q.uses.exportValue === 'int') return (value) => intValue(value, text);
    if (q.uses.exportValue === 'decimal') return (value) => floatValue(value, text);
    if (q.uses.exportValue === 'date') {
      // Records mostly share their dates with the record before: the last answer's cell is kept.
      let last: unknown;
      let lastCell: Cell = null;
      return (value) => {
        if (value !== last || typeof value !== 'string') {
          last = value;
          lastCell = dateValue(value, text);
        }
        return lastCell;
      };
    }
    if (q.uses.media && this.options.includeImages) return undefined;
    const labels = (q.uses.selectOne || q.uses.selectMultiple) && this.options.showChoiceLabels;
    return (value) => {
      if (value === undefined || value === null) return null;
      if (typeof value === 'boolean' || typeof value === 'number') return value;
      if (typeof value !== 'string') return text(JSON.stringify(value));
      if (labels) return text(choiceLabels(q, value, this.labels));
      return text(value);
    };
  }

  /** Whether the answers' strings are written as they are (no labels, links or protection) and integers as numbers. */
  private plainAnswer(q: FormQuestion): 'text' | 'number' | undefined {
    if (this.text !== asAnswered) return undefined;
    if (q.uses.exportValue === 'int' || q.uses.exportValue === 'decimal') return 'number';
    if (q.uses.exportValue === 'date') return undefined;
    if (q.uses.media && this.options.includeImages) return undefined;
    if ((q.uses.selectOne || q.uses.selectMultiple) && this.options.showChoiceLabels) return undefined;
    return 'text';
  }

  /** A media question's reader: a link to the file when it arrived (the record's `_attachments`). */
  private mediaReader(q: FormQuestion): (s: RowSource) => Cell {
    const path = q.path;
    const text = this.text;
    return (s) => {
      const value = s.container[path];
      if (value === undefined || value === null) return null;
      if (typeof value === 'boolean' || typeof value === 'number') return value;
      if (typeof value !== 'string') return text(JSON.stringify(value));
      return text(mediaValue(value, s.record, this.links));
    };
  }

  /** A select_multiple's choice column's cell; `names` is shared by the question's choice columns. */
  private choiceCell(choice: Choice, names: SplitCache): (value: unknown) => Cell {
    const o = this.options;
    if (o.valueSelectMultiples) {
      const shown = this.text(o.showChoiceLabels ? choiceLabel(choice, this.labels) : choice.name);
      return (value) => (names.of(value, ' ').includes(choice.name) ? shown : null);
    }
    if (o.binarySelectMultiples) return (value) => (names.of(value, ' ').includes(choice.name) ? 1 : 0);
    return (value) => (typeof value === 'string' && value !== '' ? names.of(value, ' ').includes(choice.name) : null);
  }

  columns(section: FormSection | undefined, osmTagKeys: readonly string[]): SectionColumn[] {
    const out: SectionColumn[] = [];
    const o = this.options;
    const base = { hxl: '', choice: undefined, key: undefined, number: undefined } as const;
    const questions = sectionQuestions(section ? section.children : this.form.root.children);
    for (const q of questions) {
      const path = q.path;
      const answer = this.answerCell(q);
      out.push({
        ...base,
        header: this.display(q.path, q.name),
        label: labelText(q.label, o.language, this.form.defaultLanguage) || this.display(q.path, q.name),
        hxl: section === undefined && q.path === q.name ? (q.hxl ?? '') : '',
        kind: 'question',
        question: q,
        number: q.uses.exportValue === 'int' ? 'int' : q.uses.exportValue === 'decimal' ? 'float' : undefined,
        read: answer ? (s) => answer(s.container[path]) : this.mediaReader(q),
        value: answer ? { from: 'item', key: path, cell: answer, plain: this.plainAnswer(q) } : undefined,
      });
      if (q.uses.selectMultiple && o.splitSelectMultiples) {
        const names = new SplitCache();
        for (const choice of q.choices) {
          const shown = o.showChoiceLabels ? choiceLabel(choice, this.labels) : choice.name;
          const header = this.display(`${q.path}/${shown}`, `${q.name}/${shown}`);
          out.push({
            ...base,
            header,
            label: `${q.name}${o.groupDelimiter}${choiceLabel(choice, this.labels)}`,
            kind: 'choice',
            question: q,
            choice,
            ...itemColumn(path, this.choiceCell(choice, names)),
          });
        }
      }
      if (q.uses.geopoint) {
        const parts = new SplitCache();
        for (let part = 0; part < 4; part++) {
          const header = this.display(geopointPartPath(q.path, part), geopointPartPath(q.name, part));
          out.push({
            ...base,
            header,
            label: header,
            kind: 'geopoint-part',
            question: q,
            number: 'float',
            ...itemColumn(path, (value) => {
              if (typeof value !== 'string') return null;
              const piece = parts.of(value, WHITESPACE)[part];
              return piece === undefined || piece === '' ? null : floatValue(piece, this.text);
            }),
          });
        }
      }
      if (q.uses.osm) {
        for (const key of osmTagKeys.filter((k) => k.startsWith(`${q.path}:`)).sort()) {
          out.push({ ...base, header: key, label: key, kind: 'osm-tag', question: q, ...itemColumn(key, (value) => metaValue(value, this.text)) });
        }
      }
    }
    const extras: string[] = [...SECTION_EXTRA_COLUMNS, ...(o.includeReviews ? REVIEW_COLUMNS : [])];
    for (const key of extras) out.push({ ...base, header: key, label: key, kind: 'extra', question: undefined, key, number: key === '_id' || key === '_index' || key === '_parent_index' ? 'int' : undefined, ...extraColumn(key, this.text) });
    return out;
  }

  headerRows(columns: readonly SectionColumn[]): string[][] {
    const o = this.options;
    const rows: string[][] = [];
    if (!o.includeLabelsOnly) rows.push(columns.map((c) => c.header));
    if (o.includeLabels || o.includeLabelsOnly) rows.push(columns.map((c) => c.label));
    if (o.includeHxl && columns.some((c) => c.hxl !== '')) rows.push(columns.map((c) => c.hxl));
    return rows;
  }
}

function notesText(value: unknown): string {
  if (!Array.isArray(value)) return '';
  return value.map((n) => (typeof n === 'string' ? n : isContainer(n) ? String(n['note'] ?? '') : String(n))).join('\r\n');
}

/** A column reading `key` of its row's container through `cell`. */
function itemColumn(key: string, cell: (value: unknown) => Cell): Pick<SectionColumn, 'read' | 'value'> {
  return { read: (s) => cell(s.container[key]), value: { from: 'item', key, cell, plain: undefined } };
}

/** An extra column's reader, for repeat rows (which have a link) and the survey's rows alike. */
function extraColumn(key: string, text: TextRule): Pick<SectionColumn, 'read' | 'value'> {
  switch (key) {
    case '_index':
      return { read: (s) => (s.link ? s.link.index : s.mainIndex), value: { from: 'index' } };
    case '_parent_index':
      return { read: (s) => (s.link ? s.link.parentIndex : -1), value: { from: 'parent-index' } };
    case '_parent_table_name':
      return { read: (s) => (s.link ? s.link.parentName : null), value: { from: 'parent-name' } };
  }
  const cell = recordCell(key, text);
  return { read: (s) => (s.link ? null : cell(s.record[key])), value: { from: 'record', key, cell } };
}

/** An extra column's cell on the survey's rows, from the record's value under `key`. */
function recordCell(key: string, text: TextRule): (value: unknown) => Cell {
  switch (key) {
    case '_tags':
      return (tags) => (Array.isArray(tags) ? text(tags.map(String).join(',')) : null);
    case '_notes':
      return (notes) => text(notesText(notes));
    case '_submission_time':
      return (value) => (typeof value === 'string' && value.length >= 19 ? { kind: 'datetime', iso: value.slice(0, 19) } : metaValue(value, text));
    default:
      return (value) => metaValue(value, text);
  }
}

/**
 * The last value split, kept for the columns that read parts of the same answer one after
 * another (a select_multiple's choices, a geopoint's four parts): one split per answer, not one
 * per column.
 */
class SplitCache {
  private value: unknown;
  private parts: readonly string[] = [];

  /** `value` split by `separator`; no parts unless it is a non-empty string. */
  of(value: unknown, separator: string | RegExp): readonly string[] {
    if (value !== this.value) {
      this.value = value;
      this.parts = typeof value === 'string' && value !== '' ? value.split(separator) : [];
    }
    return this.parts;
  }
}

const WHITESPACE = /\s+/;

class RowBuilder implements SectionRowBuilder {
  private readonly counters: number[];
  private readonly readers: ReadonlyArray<(s: RowSource) => Cell>;

  constructor(
    private readonly chain: readonly FormSection[],
    columns: readonly SectionColumn[],
    private readonly parentNames: readonly string[],
    private readonly shared: RowCounters = { main: 0, levels: chain.map(() => 0) },
  ) {
    this.counters = shared.levels;
    this.readers = columns.map((c) => c.read);
  }

  private get mainIndex(): number {
    return this.shared.main;
  }

  rows(record: ExportRecord): Cell[][] {
    this.shared.main += 1;
    const out: Cell[][] = [];
    if (this.chain.length === 0) out.push(this.row({ container: record, record, link: undefined, mainIndex: this.mainIndex }));
    else this.visit(out, record, 0, record, this.mainIndex);
    return out;
  }

  private row(source: RowSource): Cell[] {
    const readers = this.readers;
    const cells: Cell[] = [];
    for (let i = 0; i < readers.length; i += 1) cells.push((readers[i] as (s: RowSource) => Cell)(source));
    return cells;
  }

  private visit(out: Cell[][], record: ExportRecord, level: number, container: Container, parentIndex: number): void {
    const section = this.chain[level];
    if (!section) return;
    const items = container[section.path];
    if (!Array.isArray(items)) return;
    for (const item of items) {
      const index = (this.counters[level] = (this.counters[level] ?? 0) + 1);
      const itemContainer = isContainer(item) ? item : {};
      if (level === this.chain.length - 1) {
        out.push(this.row({ container: itemContainer, record, link: { index, parentIndex, parentName: this.parentNames[level] ?? '' }, mainIndex: this.mainIndex }));
      } else {
        this.visit(out, record, level + 1, itemContainer, index);
      }
    }
  }
}

/** Plans the sections of a form: the survey first, then every repeat depth-first. */
export function planSections(form: FormModel, options: LayoutOptions, links: LinkContext, sectioned: SectionedOptions, osmTagKeys: readonly string[] = []): SectionedLayout {
  const planner = new SectionPlanner(form, options, links, cellTextRule(sectioned.cellText));
  const names = [form.idString, ...form.repeats.map((r) => r.path)];
  const sheets = sheetNames(names);
  const sheetOf = new Map(names.map((n, i) => [n, sheets[i] ?? n]));
  const sections: SectionLayout[] = names.map((name, i) => {
    const repeat = i === 0 ? undefined : form.repeats[i - 1];
    const columns = planner.columns(repeat, osmTagKeys);
    return { name, sheetName: sheetOf.get(name) ?? name, fileName: name.replace(/\//g, '_'), repeat, columns, headerRows: planner.headerRows(columns) };
  });
  const parentLabel = (path: string) => (sectioned.parentNames === 'sheet' ? (sheetOf.get(path) ?? path) : path);
  const parentsOf = (chain: readonly FormSection[]) => chain.map((_, level) => parentLabel(level === 0 ? form.idString : (chain[level - 1]?.path ?? form.idString)));
  return {
    sections,
    rowBuilder: (section, counters) => {
      if (!section.repeat) return new RowBuilder([], section.columns, [], counters);
      const chain = [...repeatAncestors(section.repeat), section.repeat];
      return new RowBuilder(chain, section.columns, parentsOf(chain), counters);
    },
    chainOf: (section) => {
      const chain = section.repeat ? [...repeatAncestors(section.repeat), section.repeat] : [];
      return { paths: chain.map((s) => s.path), parentNames: parentsOf(chain) };
    },
  };
}

/** A sectioned cell as CSV text: Python's str() of onadata's typed values. */
export function sectionCellText(cell: Cell, column: SectionColumn): string {
  if (cell === null) return '';
  if (typeof cell === 'boolean') return cell ? 'True' : 'False';
  if (typeof cell === 'number') return column.number === 'float' ? pythonFloat(cell) : String(cell);
  if (isExportDate(cell)) return cell.kind === 'date' ? cell.iso : cell.iso.replace('T', ' ');
  return cell;
}
