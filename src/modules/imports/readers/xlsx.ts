// The first sheet of an .xlsx workbook as rows of text, streamed: the sheet's XML is read through
// saxes as it is inflated, so memory holds the shared-strings table and one row, not the sheet.
// An uploaded archive is hostile until read: what it inflates to is capped in all (by the sizes its
// directory declares, and yauzl stops an entry that inflates past its declared size), the parts read
// whole are capped each, and no run of text, tag or row may grow past what a real sheet holds, so a
// zip bomb is refused with a clear message instead of filling memory. yauzl inflates on zlib's thread pool.
// Cells are written as onadata's XLS import turns them into CSV (csv_import.submission_xls_to_csv):
// dates as ISO text, booleans as True/False, numbers as their shortest decimal text.
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import type { Readable } from 'node:stream';
import { ImportFileError } from './errors.ts';
import { excelSerialToText } from './excel-dates.ts';

export const NOT_A_WORKBOOK = 'The file is not an Excel workbook that can be read.';

const MB = 1024 * 1024;

export const XLSX_IMPORT_LIMITS = {
  /** All the parts together: the sheet is streamed, so this bounds the work, not the memory. */
  maxTotalBytes: 1024 * MB,
  /** Each part read whole (shared strings, styles, workbook, relationships). */
  maxPartBytes: 64 * MB,
  maxEntries: 10_000,
  /** Bytes of XML with no markup event: a cell holds at most 32,767 characters. */
  maxTokenBytes: 4 * MB,
  /** Characters in one row's cells: a row is turned into one record. */
  maxRowChars: 4_000_000,
  /** Excel's last column, XFD. */
  maxColumns: 16_384,
};

function megabytes(bytes: number): string {
  return `${Math.round(bytes / MB)} MB`;
}

function tooLarge(limit: string, detail: string): ImportFileError {
  return new ImportFileError(`The workbook is too large when uncompressed (more than ${limit}): ${detail}`);
}

function unreadable(detail: string): ImportFileError {
  return new ImportFileError(`The workbook is not one Excel could open: ${detail}`);
}

function noMarkup(entry: Entry): ImportFileError {
  return unreadable(`${entry.fileName} holds more than ${megabytes(XLSX_IMPORT_LIMITS.maxTokenBytes)} with no markup (a cell holds at most 32,767 characters).`);
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

function openZip(path: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }, (error, zip) => {
      if (error || !zip) reject(new ImportFileError(NOT_A_WORKBOOK));
      else resolve(zip);
    });
  });
}

/** The entries by name, once their number and declared sizes are found within the limits. */
function listEntries(zip: ZipFile): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>();
    if (zip.entryCount > XLSX_IMPORT_LIMITS.maxEntries) {
      reject(unreadable(`the archive has ${zip.entryCount} entries; a workbook has at most ${XLSX_IMPORT_LIMITS.maxEntries}.`));
      return;
    }
    let declared = 0;
    zip.on('entry', (entry: Entry) => {
      declared += entry.uncompressedSize;
      if (declared > XLSX_IMPORT_LIMITS.maxTotalBytes) {
        reject(tooLarge(megabytes(XLSX_IMPORT_LIMITS.maxTotalBytes), `its parts inflate to more than ${megabytes(declared)}.`));
        return;
      }
      entries.set(entry.fileName.replace(/^\/+/, ''), entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', () => reject(new ImportFileError(NOT_A_WORKBOOK)));
    zip.readEntry();
  });
}

/** What a part's reader does with the markup events; saxes takes one handler per event. */
interface PartHandlers {
  opentag?: (tag: SaxesTagPlain) => void;
  closetag?: (tag: SaxesTagPlain) => void;
  text?: (text: string) => void;
}

/**
 * Feeds an entry's XML through a SAX parser, chunk by chunk, yielding whatever the handlers queued.
 * saxes holds the text of the token it is in until the token ends, so a run of bytes with no
 * markup event (500 MB of spaces, a CDATA section) is refused once it passes maxTokenBytes.
 */
async function* saxEntry<T>(zip: ZipFile, entry: Entry, setup: (queue: T[]) => PartHandlers): AsyncGenerator<T> {
  if (entry.uncompressedSize > Number.MAX_SAFE_INTEGER) throw new ImportFileError(NOT_A_WORKBOOK);
  const stream = await openEntry(zip, entry);
  const parser = new SaxesParser({ xmlns: false });
  const queue: T[] = [];
  const handlers = setup(queue);
  let failure: Error | undefined;
  let sinceToken = 0;
  parser.on('error', (error) => {
    failure = error;
  });
  parser.on('doctype', () => {
    failure = new Error('DOCTYPE in a workbook part');
  });
  parser.on('opentag', (tag) => {
    sinceToken = 0;
    handlers.opentag?.(tag);
  });
  parser.on('closetag', (tag) => {
    sinceToken = 0;
    handlers.closetag?.(tag);
  });
  parser.on('text', (text) => {
    sinceToken = 0;
    handlers.text?.(text);
  });
  for (const event of ['cdata', 'comment', 'processinginstruction'] as const) {
    parser.on(event, () => {
      sinceToken = 0;
    });
  }
  const decoder = new TextDecoder('utf-8');
  let inflated = 0;
  try {
    for await (const chunk of readEntryChunks(stream, entry)) {
      inflated += chunk.length;
      parser.write(decoder.decode(chunk, { stream: true }));
      if (failure) throw failure instanceof ImportFileError ? failure : new ImportFileError(NOT_A_WORKBOOK);
      sinceToken += chunk.length;
      if (sinceToken > XLSX_IMPORT_LIMITS.maxTokenBytes) {
        throw noMarkup(entry);
      }
      for (const item of queue.splice(0)) yield item;
    }
    if (inflated !== entry.uncompressedSize) throw new ImportFileError(NOT_A_WORKBOOK);
    parser.write(decoder.decode()).close();
    if (failure) throw failure instanceof ImportFileError ? failure : new ImportFileError(NOT_A_WORKBOOK);
    for (const item of queue.splice(0)) yield item;
  } finally {
    stream.destroy();
  }
}

async function openEntry(zip: ZipFile, entry: Entry): Promise<Readable> {
  try {
    return await zip.openReadStreamPromise(entry);
  } catch {
    throw new ImportFileError(NOT_A_WORKBOOK);
  }
}

/**
 * An entry's inflated bytes. yauzl ends the inflater with an error as soon as it yields more than
 * the entry's declared size (validateEntrySizes), which the directory's totals were checked against.
 */
async function* readEntryChunks(stream: Readable, entry: Entry): AsyncGenerator<Buffer> {
  let inflated = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      inflated += chunk.length;
      if (inflated > entry.uncompressedSize) throw new ImportFileError(NOT_A_WORKBOOK);
      yield chunk;
    }
  } catch (error) {
    // A corrupt deflate stream, or one longer than its entry declares.
    throw error instanceof ImportFileError ? error : new ImportFileError(NOT_A_WORKBOOK);
  }
}

async function readSmallPart<T>(zip: ZipFile, entry: Entry | undefined, setup: (queue: T[]) => PartHandlers): Promise<T[]> {
  if (!entry) return [];
  if (entry.uncompressedSize > XLSX_IMPORT_LIMITS.maxPartBytes) {
    throw tooLarge(`${megabytes(XLSX_IMPORT_LIMITS.maxPartBytes)} in one part`, `${entry.fileName} inflates to ${megabytes(entry.uncompressedSize)}.`);
  }
  const out: T[] = [];
  for await (const item of saxEntry(zip, entry, setup)) out.push(item);
  return out;
}

/** Shared strings: plain `<t>` text, or the runs of rich text joined (phonetic runs left out). */
async function readSharedStrings(zip: ZipFile, entry: Entry | undefined): Promise<string[]> {
  return readSmallPart<string>(zip, entry, (queue) => {
    let current = '';
    let inText = false;
    let inPhonetic = false;
    return {
      opentag: (tag) => {
        const name = localName(tag.name);
        if (name === 'si') current = '';
        else if (name === 't') inText = true;
        else if (name === 'rPh') inPhonetic = true;
      },
      text: (text) => {
        if (inText && !inPhonetic) current += text;
      },
      closetag: (tag) => {
        const name = localName(tag.name);
        if (name === 't') inText = false;
        else if (name === 'rPh') inPhonetic = false;
        else if (name === 'si') queue.push(current);
      },
    };
  });
}

const BUILT_IN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

/** A number format shows a date or time when, quoted text and [colours] aside, it has d, m, y, h or s. */
export function isDateFormat(code: string): boolean {
  const stripped = code.replace(/"[^"]*"/g, '').replace(/\\./g, '').replace(/\[(?![hms]+\])[^\]]*\]/gi, '');
  return /[dmyhs]/i.test(stripped) && !/^general$/i.test(stripped.trim());
}

/** Which cell style indexes (`s`) format their numbers as dates. */
async function readDateStyles(zip: ZipFile, entry: Entry | undefined): Promise<Set<number>> {
  const styles = await readSmallPart<{ kind: 'fmt'; id: number; code: string } | { kind: 'xf'; fmt: number }>(zip, entry, (queue) => {
    let inCellXfs = false;
    return {
      opentag: (tag) => {
        const name = localName(tag.name);
        const attrs = tag.attributes;
        if (name === 'numFmt') queue.push({ kind: 'fmt', id: Number(attrs['numFmtId']), code: attrs['formatCode'] ?? '' });
        else if (name === 'cellXfs') inCellXfs = true;
        else if (name === 'xf' && inCellXfs) queue.push({ kind: 'xf', fmt: Number(attrs['numFmtId'] ?? 0) });
      },
      closetag: (tag) => {
        if (localName(tag.name) === 'cellXfs') inCellXfs = false;
      },
    };
  });
  const custom = new Map<number, string>();
  for (const s of styles) if (s.kind === 'fmt') custom.set(s.id, s.code);
  const dates = new Set<number>();
  let index = 0;
  for (const s of styles) {
    if (s.kind !== 'xf') continue;
    const code = custom.get(s.fmt);
    if (code !== undefined ? isDateFormat(code) : BUILT_IN_DATE_FORMATS.has(s.fmt)) dates.add(index);
    index++;
  }
  return dates;
}

interface WorkbookFacts {
  firstSheetRelId: string | undefined;
  date1904: boolean;
}

async function readWorkbook(zip: ZipFile, entry: Entry): Promise<WorkbookFacts> {
  const facts: WorkbookFacts = { firstSheetRelId: undefined, date1904: false };
  await readSmallPart<never>(zip, entry, () => ({
    opentag: (tag) => {
      const name = localName(tag.name);
      const attrs = tag.attributes;
      if (name === 'workbookPr') facts.date1904 = attrs['date1904'] === '1' || attrs['date1904'] === 'true';
      if (name === 'sheet' && facts.firstSheetRelId === undefined) {
        const rel = Object.entries(attrs).find(([key]) => localName(key) === 'id' && key !== 'sheetId');
        facts.firstSheetRelId = rel?.[1];
      }
    },
  }));
  return facts;
}

async function firstSheetPath(zip: ZipFile, entries: Map<string, Entry>, relId: string | undefined): Promise<string | undefined> {
  const rels = await readSmallPart<{ id: string; target: string }>(zip, entries.get('xl/_rels/workbook.xml.rels'), (queue) => ({
    opentag: (tag) => {
      const attrs = tag.attributes;
      if (localName(tag.name) === 'Relationship') queue.push({ id: attrs['Id'] ?? '', target: attrs['Target'] ?? '' });
    },
  }));
  const target = rels.find((r) => r.id === relId)?.target;
  if (target !== undefined) return target.startsWith('/') ? target.slice(1) : `xl/${target}`.replace(/\/\.\//g, '/');
  return [...entries.keys()].filter((name) => /^xl\/worksheets\/[^/]+\.xml$/.test(name)).sort()[0];
}

/** `B7` → 1 (zero-based column). */
function columnIndex(ref: string): number {
  let index = 0;
  for (let i = 0; i < ref.length; i++) {
    const code = ref.charCodeAt(i);
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return index - 1;
}

/** Shortest decimal text of a numeric cell (`25`, not `25.0`). */
function numberText(raw: string): string {
  const value = Number(raw);
  return Number.isFinite(value) ? String(value) : raw;
}

/** The workbook's entries, facts and first sheet. */
async function openFirstSheet(zip: ZipFile): Promise<{ entries: Map<string, Entry>; facts: WorkbookFacts; sheet: Entry }> {
  const entries = await listEntries(zip);
  const workbook = entries.get('xl/workbook.xml');
  if (!workbook) throw new ImportFileError(NOT_A_WORKBOOK);
  const facts = await readWorkbook(zip, workbook);
  const sheetPath = await firstSheetPath(zip, entries, facts.firstSheetRelId);
  const sheet = sheetPath === undefined ? undefined : entries.get(sheetPath);
  if (!sheet) throw new ImportFileError(NOT_A_WORKBOOK);
  return { entries, facts, sheet };
}

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const COLON = 0x3a;
/** Bytes that end a tag's name: whitespace, `>` and `/`. */
const NAME_END = new Uint8Array(256);
for (const byte of [0x20, 0x09, 0x0a, 0x0d, GT, SLASH]) NAME_END[byte] = 1;
/** A row's start tag is short; a "tag" running longer than this is no row of a sheet Excel can open. */
const MAX_TAG_BYTES = 64 * 1024;

const ROW = Buffer.from('row');
const VALUE = Buffer.from('v');
const INLINE_STRING = Buffer.from('is');

/** Whether bytes [start, end) are the tag name `name`, with or without a namespace prefix. */
function isTagName(data: Buffer, start: number, end: number, name: Buffer): boolean {
  const length = end - start;
  if (length < name.length || data.compare(name, 0, name.length, end - name.length, end) !== 0) return false;
  return length === name.length || data[end - name.length - 1] === COLON;
}

/**
 * Rows of the first sheet that hold a value (a `<v>` or `<is>` inside a `<row>`), counted from
 * its XML's tags without parsing it, several times faster than reading the rows: the total of an
 * import job's progress. Rows of formatted empty cells, which the reader skips, are not counted;
 * nor is the header row.
 */
export async function countXlsxRows(path: string): Promise<number> {
  const zip = await openZip(path);
  try {
    const { sheet } = await openFirstSheet(zip);
    const stream = await openEntry(zip, sheet);
    let rows = 0;
    // Inside a row that has shown no value yet.
    let inRow = false;
    let carry: Buffer | null = null;
    // Bytes since the last `<`: a sheet of spaces is refused here as the reader would refuse it.
    let sinceMarkup = 0;
    try {
      for await (const chunk of readEntryChunks(stream, sheet)) {
        const lastMarkup = chunk.lastIndexOf(LT);
        sinceMarkup = lastMarkup < 0 ? sinceMarkup + chunk.length : chunk.length - lastMarkup - 1;
        if (sinceMarkup > XLSX_IMPORT_LIMITS.maxTokenBytes) throw noMarkup(sheet);
        const data: Buffer = carry === null ? chunk : Buffer.concat([carry, chunk]);
        carry = null;
        let at = data.indexOf(LT);
        while (at >= 0) {
          let end = at + 1;
          while (end < data.length && NAME_END[data[end] as number] === 0) end++;
          if (end >= data.length) {
            carry = data.subarray(at);
            break;
          }
          if (isTagName(data, at + 1, end, ROW)) {
            const close = data.indexOf(GT, end);
            if (close < 0) {
              carry = data.subarray(at);
              break;
            }
            inRow = data[close - 1] !== SLASH;
            at = data.indexOf(LT, close);
            continue;
          }
          if (inRow && (isTagName(data, at + 1, end, VALUE) || isTagName(data, at + 1, end, INLINE_STRING))) {
            rows++;
            inRow = false;
          }
          at = data.indexOf(LT, end);
        }
        if (carry !== null && carry.length > MAX_TAG_BYTES) throw new ImportFileError(NOT_A_WORKBOOK);
      }
    } finally {
      stream.destroy();
    }
    return Math.max(rows - 1, 0);
  } finally {
    zip.close();
  }
}

export async function* readXlsxRows(path: string): AsyncGenerator<string[]> {
  const zip = await openZip(path);
  try {
    const { entries, facts, sheet } = await openFirstSheet(zip);
    const shared = await readSharedStrings(zip, entries.get('xl/sharedStrings.xml'));
    const dateStyles = await readDateStyles(zip, entries.get('xl/styles.xml'));

    const { maxColumns, maxRowChars } = XLSX_IMPORT_LIMITS;
    yield* saxEntry<string[]>(zip, sheet, (queue) => {
      let row: string[] | null = null;
      // Characters in the row so far: a shared string is stored once but copied into every record naming it.
      let rowChars = 0;
      let cellIndex = 0;
      let cellType = 'n';
      let cellStyle = 0;
      let text = '';
      let collecting = false;
      return {
        opentag: (tag) => {
          const name = localName(tag.name);
          const attrs = tag.attributes;
          if (name === 'row') {
            row = [];
            rowChars = 0;
            cellIndex = 0;
          } else if (name === 'c' && row) {
            const ref = attrs['r'];
            cellIndex = ref ? columnIndex(ref) : row.length;
            if (cellIndex >= maxColumns) throw unreadable(`a cell of ${sheet.fileName} lies beyond column XFD, Excel's last.`);
            cellType = attrs['t'] ?? 'n';
            cellStyle = Number(attrs['s'] ?? 0);
            text = '';
          } else if (name === 'v' || name === 't') {
            collecting = true;
          }
        },
        text: (t) => {
          if (collecting) text += t;
        },
        closetag: (tag) => {
          const name = localName(tag.name);
          if (name === 'v' || name === 't') {
            collecting = false;
          } else if (name === 'c' && row) {
            let value: string;
            if (cellType === 's') value = shared[Number(text)] ?? '';
            else if (cellType === 'b') value = text === '1' || text === 'true' ? 'True' : 'False';
            else if (cellType === 'e') value = '';
            else if (cellType === 'n' && text !== '') value = dateStyles.has(cellStyle) ? excelSerialToText(Number(text), facts.date1904) : numberText(text);
            else value = text;
            rowChars += value.length;
            if (rowChars > maxRowChars) throw unreadable(`a row of ${sheet.fileName} holds more than ${maxRowChars.toLocaleString('en')} characters.`);
            while (row.length < cellIndex) row.push('');
            row[cellIndex] = value;
          } else if (name === 'row' && row) {
            if (row.some((cell) => cell !== '')) queue.push(row);
            row = null;
          }
        },
      };
    });
  } finally {
    zip.close();
  }
}
