// A section of the sectioned layout as SPSS variables (§3.5): numeric for int, decimal and
// date answers, select_ones whose choice names are all numbers, split choices (1/0), GPS
// parts and the `_id`, `_index`, `_parent_index`, `_submission_time` extras; strings
// otherwise. Value labels for every select. The .sav writer makes the names valid.
import type { SavCell, SavRow, SavValueLabel, SavVariable } from '../sav/index.ts';
import { labelText, type FormModel, type FormQuestion } from '../../form-model/model.ts';
import type { SectionColumn, SectionLayout } from './sections.ts';
import { isExportDate, type Cell, type LayoutOptions } from './types.ts';
import { choiceLabel } from './values.ts';

/** onadata's is_all_numeric: every name parses as a number and none is zero-padded (`09`). */
export function allNumeric(names: readonly string[]): boolean {
  return names.every((n) => n.trim() !== '' && Number.isFinite(Number(n)) && !(n.length > 1 && n[0] === '0' && n[1] !== '.'));
}

const NUMERIC_EXTRAS = new Set(['_id', '_index', '_parent_index']);

function valueLabels(q: FormQuestion, numeric: boolean, form: FormModel, options: LayoutOptions): SavValueLabel[] {
  const ctx = { language: options.language, defaultLanguage: form.defaultLanguage };
  return q.choices.map((c) => ({ value: numeric ? Number(c.name) : c.name, label: choiceLabel(c, ctx) }));
}

function variableOf(column: SectionColumn, form: FormModel, options: LayoutOptions): SavVariable {
  const q = column.question;
  const name = column.header;
  switch (column.kind) {
    case 'question': {
      if (!q) return { name, type: 'string' };
      const label = labelText(q.label, options.language, form.defaultLanguage) ?? q.name;
      if (q.uses.exportValue === 'int') return { name, label, type: 'numeric', decimals: 0 };
      if (q.uses.exportValue === 'decimal') return { name, label, type: 'numeric' };
      if (q.uses.exportValue === 'date') return { name, label, type: 'numeric', format: 'DATE' };
      if (q.uses.selectOne && q.choices.length > 0 && allNumeric(q.choices.map((c) => c.name)) && !options.showChoiceLabels) {
        return { name, label, type: 'numeric', decimals: 0, valueLabels: valueLabels(q, true, form, options) };
      }
      if (q.uses.selectOne || q.uses.selectMultiple) return { name, label, type: 'string', valueLabels: valueLabels(q, false, form, options) };
      return { name, label, type: 'string' };
    }
    case 'choice':
      return options.valueSelectMultiples ? { name, label: column.label, type: 'string' } : { name, label: column.label, type: 'numeric', decimals: 0 };
    case 'geopoint-part':
      return { name, type: 'numeric', decimals: 6 };
    case 'extra':
      if (column.key === '_submission_time') return { name, type: 'numeric', format: 'DATETIME' };
      if (column.key !== undefined && NUMERIC_EXTRAS.has(column.key)) return { name, type: 'numeric', decimals: 0 };
      return { name, type: 'string' };
    default:
      return { name, type: 'string' };
  }
}

export function savCell(cell: Cell): SavCell {
  if (cell === null) return null;
  if (typeof cell === 'boolean') return cell ? 1 : 0;
  if (isExportDate(cell)) return cell.iso;
  return cell;
}

/** The SPSS variables of a section and the conversion of its rows. */
export function savSection(section: SectionLayout, form: FormModel, options: LayoutOptions): { variables: SavVariable[]; row: (cells: readonly Cell[]) => SavRow } {
  return {
    variables: section.columns.map((c) => variableOf(c, form, options)),
    row: (cells) => cells.map(savCell),
  };
}
