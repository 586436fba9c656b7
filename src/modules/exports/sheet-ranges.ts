// An XLSX export's sheets on more than one core (PostgreSQL only), by flat CSV's machinery
// (csv-threads.ts): helper threads and the main thread each render `_id` ranges of records into
// every sheet's rows, and the main thread hands the ranges' XML to the sheets in order, where it
// is compressed (zlib, on libuv's pool). A range's rows carry their row numbers and `_index`
// counters, which depend on the rows of every range before it: each range is rendered from where
// the records' stored repeat counts predict its counters start (one aggregate over the ranges),
// and when a range did not start where the rows written before it ended (counts stored apart from
// a record's items, records changed meanwhile) its records are read again and written here in turn.
import type { FormModel } from '../../lib/form-model/model.ts';
import { RawSections } from '../../lib/writers/layout/raw-sections.ts';
import { planSections, type SectionedLayout } from '../../lib/writers/layout/sections.ts';
import { SheetBytes } from '../../lib/writers/xlsx/sheet-bytes.ts';
import { fitRow, type SheetLimits } from '../../lib/writers/xlsx/sheet-parts.ts';
import type { ExportOptions } from './options.ts';
import type { RecordPage } from './record-rows.ts';

/** The sectioned layout of an XLSX (or XLS) export: the same plan on every thread. */
export function planSheets(form: FormModel, options: ExportOptions, baseUrl: string, osmTagKeys: readonly string[]): SectionedLayout {
  // Text cells are never evaluated, so answers like `=1+2` are written as answered.
  return planSections(form, options, { baseUrl }, { parentNames: 'sheet', cellText: 'as-answered' }, osmTagKeys);
}

/** A range of records' rows in every sheet. */
export interface SheetRange {
  readonly records: number;
  /** The `_index` counters (RawSections.counterState()) the range began and ended at. */
  readonly start: readonly number[];
  readonly end: readonly number[];
  /** Per sheet, the range's rows and their XML. */
  readonly rows: readonly number[];
  readonly chunks: ReadonlyArray<readonly Uint8Array[]>;
}

/** Writes ranges of records into every sheet's rows, as the one-pass writer writes them (xlsx-writer.ts). */
export class SheetRangeWriter {
  constructor(
    private readonly raw: RawSections,
    private readonly sheets: ReadonlyArray<{ readonly name: string; readonly headerRows: number }>,
    private readonly limits: SheetLimits,
  ) {}

  /** The page's rows, their counters going on from `start` (and each sheet's rows numbered after its header and the rows they count). */
  render(page: RecordPage, start: readonly number[]): SheetRange {
    const raw = this.raw;
    raw.setCounterState(start);
    const before = raw.rowTotals(start);
    const outs = this.sheets.map(() => new SheetBytes());
    const chunks: Uint8Array[][] = this.sheets.map(() => []);
    const numbers = this.sheets.map((sheet, i) => sheet.headerRows + (before[i] ?? 0));
    let records = 0;
    for (const record of page.storedRecords()) {
      records += 1;
      if (raw.read(record.src, record.start, record.end, record.meta)) {
        for (let i = 0; i < outs.length; i++) {
          const out = outs[i] as SheetBytes;
          const count = raw.rowCount(i);
          for (let k = 0; k < count; k++) {
            out.beginRow((numbers[i] = (numbers[i] as number) + 1));
            raw.writeRow(i, k, out);
            out.endRow();
          }
          if (out.full) (chunks[i] as Uint8Array[]).push(out.take());
        }
      } else {
        const rows = raw.rowsOf(record.parsed());
        for (let i = 0; i < outs.length; i++) {
          const out = outs[i] as SheetBytes;
          const name = this.sheets[i]?.name ?? '';
          for (const row of rows[i] ?? []) out.row((numbers[i] = (numbers[i] as number) + 1), fitRow(row, this.limits, name));
          if (out.full) (chunks[i] as Uint8Array[]).push(out.take());
        }
      }
    }
    outs.forEach((out, i) => {
      if (out.len > 0) (chunks[i] as Uint8Array[]).push(out.take());
    });
    const end = raw.counterState();
    const after = raw.rowTotals(end);
    return { records, start: [...start], end, rows: after.map((n, i) => n - (before[i] ?? 0)), chunks };
  }
}

/** Whether two counter states are the same. */
export function sameCounters(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}
