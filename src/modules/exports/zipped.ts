// csvzip and savzip: one file per section in a zip (§3.4, §3.5), all written from one pass over
// the records. The survey's file streams out as it is written; the repeats' files are compressed
// into temporary files beside it and copied out after it. Memory stays at a page of records and
// a chunk per file, whatever the number of records.
import { csvRowEncoder } from '../../lib/writers/csv/writer.ts';
import { planSections, sectionCellText, type SectionedLayout, type SectionLayout } from '../../lib/writers/layout/sections.ts';
import { savCell, savSection } from '../../lib/writers/layout/sav-columns.ts';
import type { RawRowOut, RawSections } from '../../lib/writers/layout/raw-sections.ts';
import { savCasePieces, savRowEncoder, type SavCaseOut, type SavCasePieceRow, type SavCasePieces, type SavRow, type SavWrittenRow } from '../../lib/writers/sav/index.ts';
import type { FormModel } from '../../lib/form-model/model.ts';
import type { FileBatch } from '../../lib/writers/zip/one-pass.ts';
import type { SheetRangeFacts } from './csv-threads.ts';
import type { CsvThreading } from './flat-csv.ts';
import type { ExportOptions } from './options.ts';
import type { RecordPage } from './record-rows.ts';
import { threadedSections } from './sheet-ranges.ts';
import type { SpoolFactory } from '../../lib/writers/spool.ts';
import type { Cell, ExportRecord } from '../../lib/writers/layout/types.ts';
import { zipOnePassChunks } from '../../lib/writers/zip/one-pass.ts';
import { sectionBatches, storedSectionsOf, storedSteps } from './section-pass.ts';
import type { ExportSource } from './source.ts';

/** Deflate level of csvzip: level 1 made the files far larger (bench/RESULTS.md). */
const ZIP_LEVEL = 6;

/**
 * Deflate level of savzip. A .sav case is mostly runs of the same command byte (blank slots of
 * 255-byte strings), on which level 6's lazy matching walks long hash chains, a large share of the
 * export's CPU by `perf`. Level 3 (the fastest levels' greedy matching, longer chains than level 1)
 * costs far less for somewhat larger files (figures: bench/RESULTS.md, 2026-11-28).
 */
const SAV_ZIP_LEVEL = 3;

function sectionText(cell: Cell, section: SectionLayout, index: number): string {
  const column = section.columns[index];
  return column ? sectionCellText(cell, column) : '';
}

export async function csvZip(source: ExportSource, now: Date, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const osmTagKeys = await source.osmTagKeys();
  // CSV files open in spreadsheet programs that evaluate them: onadata's protection stays.
  const layout = planSections(source.form, source.options, { baseUrl: source.baseUrl }, { parentNames: 'path', cellText: 'formula-safe' }, osmTagKeys);
  const files = layout.sections.map((section) => ({
    name: `${section.fileName}.csv`,
    encoder: csvRowEncoder(section.headerRows, { bom: source.options.winExcelUtf8 }),
  }));
  const rowOf = layout.sections.map((section) => (cells: Cell[]) => cells.map((cell, i) => sectionText(cell, section, i)));
  return zipOnePassChunks(files, sectionBatches(source, layout, rowOf), { level: ZIP_LEVEL, date: now, createSpool: spools });
}

/** A section's cells as a .sav case: each cell as savCell makes it, text straight from the record's bytes. */
class SavCells implements RawRowOut {
  out: SavCaseOut | undefined;

  cell(column: number, cell: Cell): void {
    (this.out as SavCaseOut).cell(column, savCell(cell));
  }

  textBytes(column: number, src: Uint8Array, start: number, end: number): void {
    (this.out as SavCaseOut).textBytes(column, src, start, end);
  }
}

/** Row `k` of a section of the record read last, written into its .sav case from the record's bytes. */
class StoredSavRow implements SavWrittenRow {
  constructor(
    private readonly raw: RawSections,
    private readonly section: number,
    public k: number,
    private readonly cells: SavCells,
  ) {}

  write(out: SavCaseOut): void {
    this.cells.out = out;
    this.raw.writeRow(this.section, this.k, this.cells);
  }
}

/**
 * The .sav files' rows from one pass over the records' stored bytes (raw-sections.ts): no record
 * is parsed but those whose repeats outgrew the plan.
 */
async function* storedSavBatches(
  source: ExportSource,
  layout: SectionedLayout,
  raw: RawSections,
  rowOf: ReadonlyArray<(cells: Cell[]) => SavRow>,
): AsyncGenerator<Iterable<Array<ReadonlyArray<SavRow | SavWrittenRow>>>> {
  const steps = storedSavSteps(layout, raw, rowOf);
  for await (const page of source.serialPages()) yield steps(page);
}

/** The steps of a page's records in every .sav file, read from their stored bytes by `raw`. */
function storedSavSteps(
  layout: SectionedLayout,
  raw: RawSections,
  rowOf: ReadonlyArray<(cells: Cell[]) => SavRow>,
): (page: RecordPage) => Generator<Array<ReadonlyArray<SavRow | SavWrittenRow>>> {
  const cells = new SavCells();
  /** Per section, a row object per index, and the list of this record's. */
  const made: StoredSavRow[][] = layout.sections.map(() => []);
  const lists: StoredSavRow[][] = layout.sections.map(() => []);
  const read = (): StoredSavRow[][] => {
    for (let i = 0; i < lists.length; i++) {
      const count = raw.rowCount(i);
      const mine = made[i] as StoredSavRow[];
      const list = lists[i] as StoredSavRow[];
      while (mine.length < count) mine.push(new StoredSavRow(raw, i, mine.length, cells));
      list.length = count;
      for (let k = 0; k < count; k++) list[k] = mine[k] as StoredSavRow;
    }
    return lists;
  };
  const parsed = (record: ExportRecord): SavRow[][] =>
    raw.rowsOf(record).map((rows, i) => {
      const map = rowOf[i];
      return map ? rows.map(map) : [];
    });
  return storedSteps<Array<ReadonlyArray<SavRow | SavWrittenRow>>>(raw, read, parsed);
}

/** A .sav file's variables and how a section's cells become its case. */
type SavSection = ReturnType<typeof savSection>;

/** The sections of a savzip and each one's variables and rows: the same plan on every thread. */
export function planSavFiles(form: FormModel, exportOptions: ExportOptions, baseUrl: string, osmTagKeys: readonly string[]): { layout: SectionedLayout; savs: SavSection[] } {
  // onadata always drops group names from SPSS variable names.
  const options = { ...exportOptions, removeGroupName: true, groupDelimiter: '/' as const, includeLabels: false, includeLabelsOnly: false };
  // SPSS has no formulas: strings are written as answered.
  const layout = planSections(form, options, { baseUrl }, { parentNames: 'path', cellText: 'as-answered' }, osmTagKeys);
  return { layout, savs: layout.sections.map((section) => savSection(section, form, options)) };
}

/** A range of records' cases in every .sav file, encoded apart (savCasePieces) to be joined in order. */
export class SavRangeWriter {
  private readonly cells = new SavCells();
  /** Per file, its encoder of pieces (its buffer kept from range to range). */
  private readonly pieces: SavCasePieces[];

  constructor(
    private readonly raw: RawSections,
    private readonly savs: readonly SavSection[],
  ) {
    this.pieces = savs.map((sav) => savCasePieces(sav.variables));
  }

  render(page: RecordPage, start: readonly number[]): { facts: SheetRangeFacts; chunks: Uint8Array[] } {
    const raw = this.raw;
    raw.setCounterState(start);
    const before = raw.rowTotals(start);
    const pieces = this.pieces;
    pieces.forEach((piece, i) => piece.begin(before[i] ?? 0));
    const rows = this.savs.map((_, i) => new StoredSavRow(raw, i, 0, this.cells));
    for (const record of page.storedRecords()) {
      if (raw.read(record.src, record.start, record.end, record.meta)) {
        for (let i = 0; i < pieces.length; i++) {
          const count = raw.rowCount(i);
          const row = rows[i] as StoredSavRow;
          for (let k = 0; k < count; k++) {
            row.k = k;
            (pieces[i] as SavCasePieces).add(row);
          }
        }
      } else {
        raw.rowsOf(record.parsed()).forEach((cells, i) => {
          const map = this.savs[i]?.row;
          if (map) for (const row of cells) (pieces[i] as SavCasePieces).add(map(row));
        });
      }
    }
    const end = raw.counterState();
    const after = raw.rowTotals(end);
    const made = pieces.map((piece) => piece.piece());
    return {
      facts: {
        start: [...start],
        end,
        rows: after.map((n, i) => n - (before[i] ?? 0)),
        chunks: made.map(() => 1),
        marks: made.flatMap(({ piece }) => [piece.phase, piece.firstEnd, piece.tailStart, piece.tailCount]),
      },
      chunks: made.map(({ piece }) => piece.bytes),
    };
  }
}

/** A rendered range's pieces by file, from its facts and chunks. */
function joinedPieces(facts: SheetRangeFacts, chunks: readonly Uint8Array[]): FileBatch<SavRow | SavWrittenRow, SavCasePieceRow> {
  const marks = facts.marks ?? [];
  return facts.rows.map((cases, i) => ({
    joined: {
      cases,
      piece: { bytes: chunks[i] ?? new Uint8Array(0), phase: marks[i * 4] ?? 0, firstEnd: marks[i * 4 + 1] ?? 0, tailStart: marks[i * 4 + 2] ?? 0, tailCount: marks[i * 4 + 3] ?? 8 },
    },
  }));
}

export async function savZip(source: ExportSource, now: Date, spools: SpoolFactory, threading?: CsvThreading): Promise<AsyncIterable<Uint8Array>> {
  const osmTagKeys = await source.osmTagKeys();
  const { layout, savs } = planSavFiles(source.form, source.options, source.baseUrl, osmTagKeys);
  const files = layout.sections.map((section, i) => ({
    name: `${section.fileName}.sav`,
    encoder: savRowEncoder(savs[i]?.variables ?? [], { fileLabel: 'File exported by Ona', now }),
  }));
  const rowOf = savs.map((sav) => sav.row);
  const shape = layout.sections.length > 1 ? await source.repeatShape() : undefined;
  const raw = storedSectionsOf(layout, shape);
  type Batch = FileBatch<SavRow | SavWrittenRow, SavCasePieceRow>;
  let threaded: AsyncIterable<Iterable<Batch>> | undefined;
  if (raw && threading) {
    // This thread's own ranges (see threadedWorkbookBatches): their encoders made at the first.
    let local: SavRangeWriter | undefined;
    threaded = await threadedSections<Batch>(source, raw, shape, osmTagKeys, threading, 'sav', {
      steps: storedSavSteps(layout, raw, rowOf),
      render: (page, start) => (local ??= new SavRangeWriter(storedSectionsOf(layout, shape) as RawSections, savs)).render(page, start),
      joined: joinedPieces,
      fits: () => true,
    });
  }
  const batches = threaded ?? (raw ? storedSavBatches(source, layout, raw, rowOf) : sectionBatches(source, layout, rowOf));
  return zipOnePassChunks<SavRow | SavWrittenRow, SavCasePieceRow>(files, batches, { level: SAV_ZIP_LEVEL, date: now, createSpool: spools });
}
