// One pass over an export's records for every section at once (xlsx sheets, csvzip and savzip
// files): each page of records becomes a batch holding the rows each section gets from it, so
// a record is read and parsed once however many repeats the form has.
import { RawSections } from '../../lib/writers/layout/raw-sections.ts';
import type { RepeatShape } from '../../lib/writers/layout/repeat-shape.ts';
import type { SectionedLayout } from '../../lib/writers/layout/sections.ts';
import type { Cell, ExportRecord } from '../../lib/writers/layout/types.ts';
import { ROW_META_KEYS, type RecordPage } from './record-rows.ts';
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

/**
 * The reader of the layout's rows from the stored records' bytes (raw-sections.ts), planned for
 * the most items each repeat has; undefined when the layout needs the records parsed.
 */
export async function storedSections(source: ExportSource, layout: SectionedLayout): Promise<RawSections | undefined> {
  return storedSectionsOf(layout, layout.sections.length > 1 ? await source.repeatShape() : undefined);
}

/** As storedSections, for the repeat counts `shape` (none: a layout without repeats). */
export function storedSectionsOf(layout: SectionedLayout, shape: RepeatShape | undefined): RawSections | undefined {
  return RawSections.plan(layout, (path) => shape?.largest(path) ?? 0, ROW_META_KEYS);
}

/** The steps of a page's records read by `raw` (see storedBatches), made one at a time. */
export function storedSteps<Step>(raw: RawSections, read: () => Step, parsed: (record: ExportRecord) => Step): (page: RecordPage) => Generator<Step> {
  return function* steps(page: RecordPage): Generator<Step> {
    for (const record of page.storedRecords()) {
      yield raw.read(record.src, record.start, record.end, record.meta) ? read() : parsed(record.parsed());
    }
  };
}

/**
 * As sectionBatches, a step per record in one group per page, from the records' stored bytes:
 * `read()` gives the step of a record `raw` has just read, `parsed(record)` that of one it
 * refused (more repeat items than planned), parsed whole.
 */
export async function* storedBatches<Step>(
  source: ExportSource,
  raw: RawSections,
  read: () => Step,
  parsed: (record: ExportRecord) => Step,
): AsyncGenerator<Iterable<Step>, void, undefined> {
  const steps = storedSteps(raw, read, parsed);
  for await (const page of source.serialPages()) yield steps(page);
}
