// A streaming XLSX writer: sheets of rows in, the bytes of an .xlsx file out, with memory bounded
// by one chunk of XML and the compressor's queue, whatever the number of rows. Worksheets are
// written first, as their rows arrive; the workbook part that names them comes last, once
// continuation sheets are known. Pure: no fs, network or db.
import type { Cell, SheetSource } from './cell.ts';
import {
  contentTypesXml,
  rootRelsXml,
  stylesXml,
  workbookRelsXml,
  workbookXml,
  worksheetPath,
} from './package-parts.ts';
import { sheetParts, type SheetLimits } from './sheet-parts.ts';
import { rowXml, SHEET_END, SHEET_START } from './sheet-xml.ts';
import { zipChunks, type ZipEntry } from './zip-writer.ts';

export const XLSX_LIMITS: SheetLimits = { maxRows: 1_048_576, maxColumns: 16_384 };

export interface XlsxOptions {
  /** zlib level, 0 (store) to 9. Default 1: see the README for the measurements. */
  readonly compressionLevel?: number;
  /** Row limit per sheet; only tests lower it. */
  readonly maxRows?: number;
  /** Modification time stamped on the zip entries. Default now. */
  readonly date?: Date;
  /** Characters of XML gathered before a chunk is handed to the compressor. Default 65,536. */
  readonly chunkChars?: number;
}

async function* worksheetXml(rows: AsyncIterable<readonly Cell[]>, chunkChars: number): AsyncGenerator<string, void, undefined> {
  let xml = SHEET_START;
  let rowNumber = 0;
  for await (const row of rows) {
    rowNumber += 1;
    xml += rowXml(rowNumber, row);
    if (xml.length >= chunkChars) {
      yield xml;
      xml = '';
    }
  }
  yield xml + SHEET_END;
}

async function* packageEntries(sheets: SheetSource, limits: SheetLimits, chunkChars: number): AsyncGenerator<ZipEntry, void, undefined> {
  const names: string[] = [];
  for await (const part of sheetParts(sheets, limits)) {
    yield { name: worksheetPath(names.length), data: worksheetXml(part.rows, chunkChars) };
    names.push(part.name);
  }
  if (names.length === 0) {
    yield { name: worksheetPath(0), data: [SHEET_START + SHEET_END] };
    names.push('Sheet1');
  }
  yield { name: 'xl/workbook.xml', data: [workbookXml(names)] };
  yield { name: 'xl/_rels/workbook.xml.rels', data: [workbookRelsXml(names.length)] };
  yield { name: 'xl/styles.xml', data: [stylesXml()] };
  yield { name: '_rels/.rels', data: [rootRelsXml()] };
  yield { name: '[Content_Types].xml', data: [contentTypesXml(names.length)] };
}

/** The .xlsx file's bytes, in chunks. Errors (including SpreadsheetLimitError) surface from the iteration. */
export function xlsxChunks(sheets: SheetSource, options: XlsxOptions = {}): AsyncGenerator<Uint8Array, void, undefined> {
  const limits: SheetLimits = { ...XLSX_LIMITS, maxRows: options.maxRows ?? XLSX_LIMITS.maxRows };
  return zipChunks(packageEntries(sheets, limits, options.chunkChars ?? 65_536), {
    level: options.compressionLevel ?? 1,
    date: options.date ?? new Date(),
  });
}
