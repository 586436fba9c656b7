// One pass over an export's records for every section at once (xlsx sheets, csvzip and savzip
// files): each page of records becomes a batch holding the rows each section gets from it, so
// a record is read and parsed once however many repeats the form has.
import type { SectionedLayout } from '../../exports/layout/sections.ts';
import type { Cell } from '../../exports/layout/types.ts';
import type { ExportSource } from './source.ts';

/** Rows by section index, a page of records at a time; `rowOf` turns a section's cells into its rows. */
export async function* sectionBatches<Row>(
  source: ExportSource,
  layout: SectionedLayout,
  rowOf: ReadonlyArray<(cells: Cell[]) => Row>,
): AsyncGenerator<Row[][], void, undefined> {
  const builders = layout.sections.map((section) => layout.rowBuilder(section));
  for await (const page of source.serialPages()) {
    const batch: Row[][] = builders.map(() => []);
    for (const record of page) {
      for (let i = 0; i < builders.length; i += 1) {
        const rows = builders[i]?.rows(record) ?? [];
        const out = batch[i];
        const map = rowOf[i];
        if (!out || !map) continue;
        for (const cells of rows) out.push(map(cells));
      }
    }
    page.length = 0; // see source.ts usedPage
    yield batch;
  }
}
