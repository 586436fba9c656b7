// itemsets.csv from the external_choices sheet, for select_one_external: the
// sheet's header row, then each row's values, every field quoted.
import type { Sheet } from '../workbook/model.ts';

function quote(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}

export function itemsetsCsv(sheet: Sheet | undefined): string | undefined {
  if (!sheet || sheet.rows.length === 0) return undefined;
  const lines = [sheet.headers.map(quote).join(',')];
  for (const row of sheet.rows) lines.push(Object.values(row).map(quote).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
