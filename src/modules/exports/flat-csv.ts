// Flat CSV: the flat layout through the CSV writer.
import { csvChunks } from '../../exports/csv/writer.ts';
import { planFlatLayout } from '../../exports/layout/flat.ts';
import type { ExportSource } from './source.ts';

export async function flatCsvChunks(source: ExportSource): Promise<AsyncIterable<Uint8Array>> {
  const [shape, osmTagKeys] = await Promise.all([source.repeatShape(), source.osmTagKeys()]);
  const layout = planFlatLayout(source.form, source.options, shape, { baseUrl: source.baseUrl }, osmTagKeys);
  async function* rows(): AsyncGenerator<string[]> {
    for await (const record of source.records()) yield layout.row(record);
  }
  return csvChunks(layout.headerRows, rows(), { bom: source.options.winExcelUtf8 });
}
