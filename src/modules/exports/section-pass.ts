// One pass over an export's records for every section at once (xlsx sheets, csvzip and savzip
// files): each page of records becomes a batch holding the rows each section gets from it, so
// a record is read and parsed once however many repeats the form has.
import type { SectionedLayout } from '../../lib/writers/layout/sections.ts';
import type { Cell, ExportRecord } from '../../lib/writers/layout/types.ts';
import type { ExportSource } from './source.ts';

/**
 * Rows by section index, a record at a time, in one group per page of records; each record is
 * made and its rows built only when the writer asks for them, so one record's rows are alive at
 * once. `rowOf` turns a section's cells into its rows.
 */
export async function* sectionBatches<Row>(
  source: ExportSource,
  layout: SectionedLayout,
  rowOf: ReadonlyArray<(cells: Cell[]) => Row>,
): AsyncGenerator<Iterable<Row[][]>, void, undefined> {
  const builders = layout.sections.map((section) => layout.rowBuilder(section));
  function* steps(records: Iterable<ExportRecord>): Generator<Row[][]> {
    for (const record of records) {
      yield builders.map((builder, i) => {
        const map = rowOf[i];
        return map ? builder.rows(record).map(map) : [];
      });
    }
  }
  for await (const page of source.serialPages()) yield steps(page.records);
}
