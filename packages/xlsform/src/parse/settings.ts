// The settings sheet: one row of form-wide settings (form_id, title, version...).
import { SETTINGS_HEADER_ALIASES } from '../spec/aliases.ts';
import { SETTINGS_COLUMNS } from '../spec/columns.ts';
import type { JsonObject } from '../types.ts';
import type { Workbook } from '../workbook/model.ts';
import { isXmlTag } from './expression.ts';
import { groupSheet } from './headers.ts';
import { SUPPRESS_SPELLING_HINT, sheetMisspelling, text } from './json-helpers.ts';
import { invalidName } from './survey-rules.ts';

export function readSettings(workbook: Workbook, warnings: string[]): JsonObject {
  const sheet = workbook.sheets.get('settings');
  if (!sheet) {
    const similar = sheetMisspelling('settings', workbook.sheetNames);
    if (similar) warnings.push(similar + SUPPRESS_SPELLING_HINT);
    return {};
  }
  let source = sheet;
  if (sheet.headers.includes('id_string') && sheet.headers.includes('form_id')) {
    source = { ...sheet, headers: sheet.headers.filter((h) => h !== 'id_string') };
    const first = source.rows[0];
    if (first) {
      const { id_string: _dropped, ...rest } = first;
      source = { ...source, rows: [rest, ...source.rows.slice(1)] };
    }
    warnings.push(
      'The form_id and id_string column headers are both specified in the settings sheet provided. This may cause errors during conversion. In future, its best to avoid specifying both column headers in the settings sheet.',
    );
  }
  const grouped = groupSheet(source, { sheetName: 'settings', aliases: SETTINGS_HEADER_ALIASES, columns: SETTINGS_COLUMNS });
  const settings = grouped.rows[0]?.data ?? {};
  const name = text(settings['name']);
  if (name !== undefined && !isXmlTag(name)) throw invalidName('settings', 1, 'name');
  return settings;
}

