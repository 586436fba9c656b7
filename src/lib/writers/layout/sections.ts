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
import { cellTextRule, choiceLabel, choiceLabels, geopointPartPath, mediaValue, pythonFloat, type LabelContext } from './values.ts';

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
}

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
  /** A fresh row builder for one section (its running `_index` counters start at 1). */
  rowBuilder(section: SectionLayout): SectionRowBuilder;
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
   * A question column's reader, its branches chosen once: readers run for every cell of an
   * export, and a decision made per cell cost more than the value it read.
   */
  private answerReader(q: FormQuestion): (s: RowSource) => Cell {
    const path = q.path;
    const text = this.text;
    if (q.uses.exportValue === 'int') return (s) => intValue(s.container[path], text);
    if (q.uses.exportValue === 'decimal') return (s) => floatValue(s.container[path], text);
    if (q.uses.exportValue === 'date') {
      // Records mostly share their dates with the record before: the last answer's cell is kept.
      let last: unknown;
      let lastCell: Cell = null;
      return (s) => {
        const value = s.container[path];
        if (value !== last || typeof value !== 'string') {
          last = value;
          lastCell = dateValue(value, text);
        }
        return lastCell;
      };
    }
    const media = q.uses.media && this.options.includeImages;
    const labels = (q.uses.selectOne || q.uses.selectMultiple) && this.options.showChoiceLabels;
    return (s) => {
      const value = s.container[path];
      if (value === undefined || value === null) return null;
      if (typeof value === 'boolean' || typeof value === 'number') return value;
      if (typeof value !== 'string') return text(JSON.stringify(value));
      if (media) return text(mediaValue(value, s.record, this.links));
      if (labels) return text(choiceLabels(q, value, this.labels));
      return text(value);
    };
  }

  /** A select_multiple's choice column reader; `names` is shared by the question's choice columns. */
  private choiceReader(choice: Choice, path: string, names: SplitCache): (s: RowSource) => Cell {
    const o = this.options;
    if (o.valueSelectMultiples) {
      const shown = this.text(o.showChoiceLabels ? choiceLabel(choice, this.labels) : choice.name);
      return (s) => (names.of(s.container[path], ' ').includes(choice.name) ? shown : null);
    }
    if (o.binarySelectMultiples) return (s) => (names.of(s.container[path], ' ').includes(choice.name) ? 1 : 0);
    return (s) => {
      const value = s.container[path];
      return typeof value === 'string' && value !== '' ? names.of(value, ' ').includes(choice.name) : null;
    };
  }

  columns(section: FormSection | undefined, osmTagKeys: readonly string[]): SectionColumn[] {
    const out: SectionColumn[] = [];
    const o = this.options;
    const base = { hxl: '', choice: undefined, key: undefined, number: undefined } as const;
    const questions = sectionQuestions(section ? section.children : this.form.root.children);
    for (const q of questions) {
      out.push({
        ...base,
        header: this.display(q.path, q.name),
        label: labelText(q.label, o.language, this.form.defaultLanguage) || this.display(q.path, q.name),
        hxl: section === undefined && q.path === q.name ? (q.hxl ?? '') : '',
        kind: 'question',
        question: q,
        number: q.uses.exportValue === 'int' ? 'int' : q.uses.exportValue === 'decimal' ? 'float' : undefined,
        read: this.answerReader(q),
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
            read: this.choiceReader(choice, q.path, names),
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
            read: (s) => {
              const value = s.container[q.path];
              if (typeof value !== 'string') return null;
              const piece = parts.of(value, WHITESPACE)[part];
              return piece === undefined || piece === '' ? null : floatValue(piece, this.text);
            },
          });
        }
      }
      if (q.uses.osm) {
        for (const key of osmTagKeys.filter((k) => k.startsWith(`${q.path}:`)).sort()) {
          out.push({ ...base, header: key, label: key, kind: 'osm-tag', question: q, read: (s) => metaValue(s.container[key], this.text) });
        }
      }
    }
    const extras: string[] = [...SECTION_EXTRA_COLUMNS, ...(o.includeReviews ? REVIEW_COLUMNS : [])];
    for (const key of extras) out.push({ ...base, header: key, label: key, kind: 'extra', question: undefined, key, number: key === '_id' || key === '_index' || key === '_parent_index' ? 'int' : undefined, read: extraReader(key, this.text) });
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

/** An extra column's reader, for repeat rows (which have a link) and the survey's rows alike. */
function extraReader(key: string, text: TextRule): (s: RowSource) => Cell {
  switch (key) {
    case '_index':
      return (s) => (s.link ? s.link.index : s.mainIndex);
    case '_parent_index':
      return (s) => (s.link ? s.link.parentIndex : -1);
    case '_parent_table_name':
      return (s) => (s.link ? s.link.parentName : null);
    case '_tags':
      return (s) => {
        if (s.link) return null;
        const tags = s.record['_tags'];
        return Array.isArray(tags) ? text(tags.map(String).join(',')) : null;
      };
    case '_notes':
      return (s) => (s.link ? null : text(notesText(s.record['_notes'])));
    case '_submission_time':
      return (s) => {
        if (s.link) return null;
        const value = s.record['_submission_time'];
        return typeof value === 'string' && value.length >= 19 ? { kind: 'datetime', iso: value.slice(0, 19) } : metaValue(value, text);
      };
    default:
      return (s) => (s.link ? null : metaValue(s.record[key], text));
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
  private mainIndex = 0;
  private readonly readers: ReadonlyArray<(s: RowSource) => Cell>;

  constructor(
    private readonly chain: readonly FormSection[],
    columns: readonly SectionColumn[],
    private readonly parentNames: readonly string[],
  ) {
    this.counters = chain.map(() => 0);
    this.readers = columns.map((c) => c.read);
  }

  rows(record: ExportRecord): Cell[][] {
    this.mainIndex += 1;
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
  return {
    sections,
    rowBuilder: (section) => {
      if (!section.repeat) return new RowBuilder([], section.columns, []);
      const chain = [...repeatAncestors(section.repeat), section.repeat];
      const parents = chain.map((_, level) => parentLabel(level === 0 ? form.idString : (chain[level - 1]?.path ?? form.idString)));
      return new RowBuilder(chain, section.columns, parents);
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
