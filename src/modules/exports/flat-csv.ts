// Flat CSV: the flat layout through the CSV writer, a database page of records at a time.
import { csvLine, CsvEncoder } from '../../exports/csv/writer.ts';
import { planFlatLayout } from '../../exports/layout/flat.ts';
import type { ExportSource } from './source.ts';

export async function flatCsvChunks(source: ExportSource): Promise<AsyncIterable<Uint8Array>> {
  const [shape, osmTagKeys] = await Promise.all([source.repeatShape(), source.osmTagKeys()]);
  const layout = planFlatLayout(source.form, source.options, shape, { baseUrl: source.baseUrl }, osmTagKeys);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const encoder = new CsvEncoder({ bom: source.options.winExcelUtf8 });
    for (const row of layout.headerRows) encoder.add(csvLine(row));
    // One chunk per page: each record costs no promise or generator step of its own.
    for await (const page of source.pages()) {
      for (const record of page) encoder.add(csvLine(layout.row(record)));
      page.length = 0;
      yield encoder.flush();
    }
    const last = encoder.flush();
    if (last.byteLength > 0) yield last;
  }
  return chunks();
}
