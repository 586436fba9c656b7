// The flat layout (csv): one row per record, repeats spread into indexed column blocks whose
// number comes from the data (`children[1]/childs_name`, `children[2]/childs_name`…), split
// select_multiples, geopoint parts, then onadata's meta columns and OSM tag columns (§3.2).
// Missing keys read `n/a`; present-but-null reads empty.
import { labelText, repeatAncestors, sectionQuestions, type FormModel, type FormNode, type FormQuestion, type FormSection } from '../../form-model/model.ts';
import type { RepeatShape } from './repeat-shape.ts';
import type { CellText, ExportRecord, LayoutOptions, LinkContext } from './types.ts';
import { cellTextRule, choiceLabel, choiceLabels, choiceNames, flatTags, geopointPartPath, mediaValue, pointParts, pythonFloat, sanitizeText, type LabelContext } from './values.ts';

export const NA = 'n/a';

/** onadata's ADDITIONAL_COLUMNS, in order, with `_last_edited_by` (§3.2 item 4). */
export const FLAT_META_COLUMNS = [
  '_id', '_uuid', '_submission_time', '_date_modified', '_tags', '_notes', '_version', '_duration',
  '_submitted_by', '_last_edited_by', '_total_media', '_media_count', '_media_all_received',
] as const;
export const REVIEW_COLUMNS = ['_review_status', '_review_comment', '_review_date'] as const;

type Container = Readonly<Record<string, unknown>> | undefined;
type Locate = (record: ExportRecord) => Container;

/** One step from a container into a repeat's item: `container[key][index]`, when that is an object. */
export interface ItemStep {
  readonly key: string;
  readonly index: number;
}

/**
 * What a column holds, told to writers that compile their rows (src/lib/writers/csv/compiled-rows.ts).
 * Each reads the value under `key` in the record, or in the repeat item that `steps` lead to, and
 * shows `n/a` when it is missing; otherwise, as `read` shows it:
 * - value: '' for null, numbers as text (a decimal as Python writes a float), text through
 *   sanitizeText, other values through text();
 * - choice: `chosen` when the space-separated answer holds `choice`, else `unchosen` (a
 *   split select_multiple);
 * - part: the `part`-th of a geopoint's four space-separated parts, '' when it has not four;
 * - media: a media answer's link (mediaValue, from the record's `_attachments`), sanitised;
 *   values that are not text as `value` shows them;
 * - tags: the value through flatTags (`_tags`);
 * - empty: always '' (`_notes`: the flat CSV leaves it empty), missing or not.
 * Columns whose text depends on more (choice labels, media links) have no rule, nor has any
 * column of an `as-answered` layout (the rules spell CSV's protected text).
 */
export type ColumnRule =
  | { readonly kind: 'value'; readonly steps: readonly ItemStep[]; readonly key: string; readonly decimal: boolean }
  | { readonly kind: 'choice'; readonly steps: readonly ItemStep[]; readonly key: string; readonly choice: string; readonly chosen: string; readonly unchosen: string }
  | { readonly kind: 'part'; readonly steps: readonly ItemStep[]; readonly key: string; readonly part: number }
  | { readonly kind: 'media'; readonly steps: readonly ItemStep[]; readonly key: string; readonly baseUrl: string }
  | { readonly kind: 'tags'; readonly steps: readonly ItemStep[]; readonly key: string }
  | { readonly kind: 'empty'; readonly steps: readonly ItemStep[]; readonly key: string };

export interface FlatColumn {
  /** The header as written (after remove_group_name and group_delimiter). */
  readonly header: string;
  readonly label: string;
  /** The HXL tag under this column, or ''. */
  readonly hxl: string;
  readonly read: (record: ExportRecord) => string;
  /** The column as data, where `read` does no more than it says. */
  readonly rule?: ColumnRule;
}

export interface FlatLayout {
  readonly columns: readonly FlatColumn[];
  /** Header, label and HXL rows as the options ask for them. */
  readonly headerRows: readonly (readonly string[])[];
  row(record: ExportRecord): string[];
}

/** The value when it is an object (a repeat item), else undefined. */
export function asObject(value: unknown): Container {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * `compute` remembering its last argument and result. The columns of a record are read one after
 * another, so the columns that share a value (a record's repeat item, an answer split into parts)
 * work it out once per record.
 */
function rememberLast<K, V>(compute: (key: K) => V): (key: K) => V {
  let known = false;
  let lastKey: K | undefined;
  let lastValue: V | undefined;
  return (key) => {
    if (!known || key !== lastKey) {
      known = true;
      lastKey = key;
      lastValue = compute(key);
    }
    return lastValue as V;
  };
}

/** A value as a flat cell shows it, its text through `rule`. */
function valueText(value: unknown, rule: (value: string) => string): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return rule(value);
  return rule(JSON.stringify(value));
}

/** A value as a flat CSV cell shows it when no option changes its text (see ColumnRule). */
export function text(value: unknown): string {
  return valueText(value, sanitizeText);
}

class FlatPlanner {
  readonly columns: FlatColumn[] = [];
  private readonly labels: LabelContext;
  private readonly cellText: (value: string) => string;
  /** ColumnRules describe protected text (the CSV writers'): a layout as answered has none. */
  private readonly withRules: boolean;

  constructor(
    private readonly form: FormModel,
    private readonly options: LayoutOptions,
    private readonly shape: RepeatShape,
    private readonly links: LinkContext,
    policy: CellText,
  ) {
    this.labels = { language: options.language, defaultLanguage: form.defaultLanguage };
    this.cellText = cellTextRule(policy);
    this.withRules = policy === 'formula-safe';
  }

  /** A value's text under this layout's CellText. */
  private text(value: unknown): string {
    return valueText(value, this.cellText);
  }

  private push(column: FlatColumn, rule: ColumnRule | undefined): void {
    this.columns.push(rule && this.withRules ? { ...column, rule } : column);
  }

  private display(raw: string, short: string): string {
    const name = this.options.removeGroupName ? short : raw;
    return this.options.groupDelimiter === '/' ? name : name.split('/').join(this.options.groupDelimiter);
  }

  private questionLabel(q: FormQuestion): string {
    return labelText(q.label, this.options.language, this.form.defaultLanguage) || q.name;
  }

  private answer(q: FormQuestion, value: unknown, record: ExportRecord): string {
    if (typeof value === 'number' && q.uses.exportValue === 'decimal') return pythonFloat(value);
    if (typeof value !== 'string') return this.text(value);
    let out = value;
    if (q.uses.media && this.options.includeImages) out = mediaValue(value, record, this.links);
    else if ((q.uses.selectOne || q.uses.selectMultiple) && this.options.showChoiceLabels) out = choiceLabels(q, value, this.labels);
    return this.cellText(out);
  }

  /** Whether the question's text is its value's alone (no labels or links in its place). */
  private plain(q: FormQuestion): boolean {
    return !(q.uses.media && this.options.includeImages) && !((q.uses.selectOne || q.uses.selectMultiple) && this.options.showChoiceLabels);
  }

  /**
   * The columns of one question read from the container `locate` finds (the one `steps` lead
   * to); `raw` is its header path.
   */
  private question(q: FormQuestion, raw: string, locate: Locate, steps: readonly ItemStep[], hxl: string): void {
    const o = this.options;
    if (q.uses.selectMultiple && o.splitSelectMultiples) {
      // The choice columns of one record read the same answer: it is split once.
      const namesOf = rememberLast(choiceNames);
      for (const choice of q.choices) {
        const shown = o.showChoiceLabels ? choiceLabel(choice, this.labels) : choice.name;
        const [chosen, unchosen] = o.valueSelectMultiples ? [this.cellText(shown), ''] : o.binarySelectMultiples ? ['1', '0'] : ['True', 'False'];
        const column: FlatColumn = {
          header: this.display(`${raw}/${shown}`, `${q.name}/${shown}`),
          label: `${q.name}${o.groupDelimiter}${choiceLabel(choice, this.labels)}`,
          hxl: '',
          read: (record) => {
            const names = namesOf(locate(record)?.[q.path]);
            if (names === undefined) return NA;
            return names.includes(choice.name) ? chosen : unchosen;
          },
        };
        this.push(column, { kind: 'choice', steps, key: q.path, choice: choice.name, chosen, unchosen });
      }
    } else {
      const column: FlatColumn = {
        header: this.display(raw, q.name),
        label: this.questionLabel(q),
        hxl,
        read: (record) => {
          const container = locate(record);
          const value = container?.[q.path];
          return value === undefined ? NA : this.answer(q, value, record);
        },
      };
      const rule: ColumnRule | undefined = this.plain(q)
        ? { kind: 'value', steps, key: q.path, decimal: q.uses.exportValue === 'decimal' }
        : q.uses.media && !q.uses.selectOne && !q.uses.selectMultiple
          ? { kind: 'media', steps, key: q.path, baseUrl: this.links.baseUrl }
          : undefined;
      this.push(column, rule);
    }
    if (q.uses.geopoint) {
      // The four part columns of one record read the same answer: it is split once.
      const partsOf = rememberLast(pointParts);
      for (let part = 0; part < 4; part++) {
        const header = this.display(geopointPartPath(raw, part), geopointPartPath(q.name, part));
        const column: FlatColumn = {
          header,
          label: header,
          hxl: '',
          read: (record) => {
            const parts = partsOf(locate(record)?.[q.path]);
            if (parts === undefined) return NA;
            return parts[part] ?? '';
          },
        };
        this.push(column, { kind: 'part', steps, key: q.path, part });
      }
    }
  }

  walk(nodes: readonly FormNode[]): void {
    const root: Locate = (record) => record;
    for (const node of nodes) {
      if (node.kind === 'question') {
        // HXL tags apply to questions directly under the survey (onadata's get_columns_with_hxl).
        this.question(node, node.path, root, [], node.path === node.name ? (node.hxl ?? '') : '');
      } else if (node.kind === 'group') {
        this.walk(node.children);
      } else {
        for (const repeat of [node, ...this.form.repeats.filter((r) => repeatAncestors(r).includes(node))]) {
          this.repeatBlocks(repeat);
        }
      }
    }
  }

  /** Every block of one repeat, for every position of its enclosing repeats. */
  private repeatBlocks(repeat: FormSection): void {
    const chain = [...repeatAncestors(repeat), repeat];
    const tags = this.options.repeatIndexTags;
    const visit = (level: number, indices: number[], prefix: string, locate: Locate, steps: readonly ItemStep[]): void => {
      const section = chain[level];
      if (!section) return;
      const parent = chain[level - 1];
      const relative = parent ? section.path.slice(parent.path.length + 1) : section.path;
      const count = this.shape.max(section.path, indices);
      for (let i = 1; i <= count; i++) {
        const raw = `${prefix}${relative}${tags[0]}${i}${tags[1]}`;
        // Every column of the block asks for the same item of the same record in turn.
        const find = rememberLast((record: ExportRecord): Container => {
          const items = locate(record)?.[section.path];
          return Array.isArray(items) ? asObject(items[i - 1]) : undefined;
        });
        const itemSteps = [...steps, { key: section.path, index: i - 1 }];
        if (level === chain.length - 1) {
          for (const q of sectionQuestions(section.children)) this.question(q, `${raw}/${q.path.slice(section.path.length + 1)}`, find, itemSteps, '');
        } else {
          visit(level + 1, [...indices, i], `${raw}/`, find, itemSteps);
        }
      }
    };
    visit(0, [], '', (record) => record, []);
  }

  meta(osmTagKeys: readonly string[]): void {
    const keys: string[] = [...FLAT_META_COLUMNS, ...(this.options.includeReviews ? REVIEW_COLUMNS : [])];
    for (const key of keys) {
      const read = (record: ExportRecord): string => {
        const value = record[key];
        if (key === '_notes') return '';
        if (value === undefined) return NA;
        return key === '_tags' ? flatTags(value) : this.text(value);
      };
      const rule: ColumnRule = key === '_notes' ? { kind: 'empty', steps: [], key } : key === '_tags' ? { kind: 'tags', steps: [], key } : { kind: 'value', steps: [], key, decimal: false };
      this.push({ header: key, label: key, hxl: '', read }, rule);
    }
    // onadata's csv_builder: each osm question's keys in turn, in form order, sorted within it.
    const order = (key: string): number => this.form.osmQuestions.findIndex((q) => key.startsWith(`${q.path}:`));
    for (const key of [...osmTagKeys].sort((a, b) => order(a) - order(b) || (a < b ? -1 : a > b ? 1 : 0))) {
      const read = (record: ExportRecord): string => (record[key] === undefined ? NA : this.text(record[key]));
      this.push({ header: key, label: key, hxl: '', read }, { kind: 'value', steps: [], key, decimal: false });
    }
  }
}

/**
 * Plans the flat columns of a form. `shape` gives the repeat block counts of the exported
 * records; `osmTagKeys` the `<field>:<tag>` keys found in them. The flat layout is CSV's, so its
 * text is formula-safe unless a format that never evaluates it asks for `as-answered`.
 */
export function planFlatLayout(
  form: FormModel,
  options: LayoutOptions,
  shape: RepeatShape,
  links: LinkContext,
  osmTagKeys: readonly string[] = [],
  cellText: CellText = 'formula-safe',
): FlatLayout {
  const planner = new FlatPlanner(form, options, shape, links, cellText);
  planner.walk(form.root.children);
  planner.meta(osmTagKeys);
  const columns = planner.columns;
  const headerRows: string[][] = [];
  if (!options.includeLabelsOnly) headerRows.push(columns.map((c) => c.header));
  if (options.includeLabels || options.includeLabelsOnly) headerRows.push(columns.map((c) => c.label));
  if (options.includeHxl && columns.some((c) => c.hxl !== '')) headerRows.push(columns.map((c) => c.hxl));
  const readers = columns.map((c) => c.read);
  return {
    columns,
    headerRows,
    row: (record) => readers.map((read) => read(record)),
  };
}
