// Picks a reader from the file name's extension, falling back to the bytes:
// a zip is xlsx, an OLE2 compound file is xls, anything else is text.
import { XlsFormError } from '../errors.ts';
import { readCsv } from './csv.ts';
import { readMarkdown } from './markdown.ts';
import type { Workbook } from './model.ts';
import { readSpreadsheet, workbookReadError } from './spreadsheet.ts';
import { ZipArchive } from './zip.ts';

export type InputFormat = 'xlsx' | 'xls' | 'csv' | 'md';

const EXTENSIONS: Record<string, InputFormat> = { xlsx: 'xlsx', xlsm: 'xlsx', xls: 'xls', csv: 'csv', md: 'md' };

function sniff(bytes: Uint8Array): InputFormat | undefined {
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) return 'xlsx';
  if (bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0) return 'xls';
  return undefined;
}

export function formatOf(fileName: string, input: Uint8Array | string): InputFormat | undefined {
  const dot = fileName.lastIndexOf('.');
  const ext = dot >= 0 ? fileName.slice(dot + 1).toLowerCase() : '';
  const byName = EXTENSIONS[ext];
  if (byName) return byName;
  if (typeof input !== 'string') return sniff(input);
  return undefined;
}

/**
 * An .xlsx's archive with every part inflated on zlib's thread pool, within the workbook limits, so
 * that reading it later does no inflating on the event loop; undefined for other formats.
 */
export async function openWorkbookArchive(input: Uint8Array | string, fileName: string): Promise<ZipArchive | undefined> {
  if (typeof input === 'string' || formatOf(fileName, input) !== 'xlsx') return undefined;
  try {
    const archive = ZipArchive.open(input);
    await archive.preload();
    return archive;
  } catch (err) {
    throw workbookReadError('xlsx', err);
  }
}

/** `archive`: the file's archive from openWorkbookArchive, when it was opened ahead. */
export function readWorkbook(input: Uint8Array | string, fileName: string, archive?: ZipArchive): Workbook {
  const format = formatOf(fileName, input);
  const asText = (): string => (typeof input === 'string' ? input : new TextDecoder('utf-8').decode(input));
  switch (format) {
    case 'xlsx':
    case 'xls':
      if (typeof input === 'string') {
        throw new XlsFormError(`A .${format} file must be given as bytes, not text.`, { code: 'read_error' });
      }
      return readSpreadsheet(input, format, archive);
    case 'csv':
      return readCsv(asText());
    case 'md':
      return readMarkdown(asText());
    default: {
      const text = asText();
      if (text.includes('|')) return readMarkdown(text);
      if (text.includes(',')) return readCsv(text);
      throw new XlsFormError(
        'The file was not recognised as a supported XLSForm type. Must be one of: .xlsx, .xlsm, .xls, .md, .csv',
        { code: 'unsupported_format' },
      );
    }
  }
}
