// Zip bombs for tests: archives whose entries inflate to hundreds of megabytes from a few hundred
// kilobytes, built without deflating the hundreds of megabytes (see deflateRuns).
import { constants, crc32, deflateRawSync } from 'node:zlib';

export interface BombEntry {
  name: string;
  /** Text before the padding (or the whole entry when there is none). */
  head: string;
  /** Bytes of padding (a repeated byte) after the head. */
  padBytes?: number;
  /** The byte repeated; a space by default. */
  padByte?: number;
  tail?: string;
  /** The uncompressed size written in the headers, when it should lie. */
  declaredSize?: number;
}

const CHUNK = 1024 * 1024;

export interface Deflated {
  data: Buffer;
  crc: number;
  size: number;
}

/**
 * A raw deflate stream of each run's bytes repeated its number of times, in order, with the
 * CRC-32 and size of what it inflates to. Each run's bytes are deflated once, ending in a full
 * flush: that empties the compressor's window and ends on a byte, so the compressed bytes stand
 * alone and are repeated as they are. Deflating every copy of a 500 MB padding instead cost
 * seconds of CPU per bomb; the stream inflates to the same bytes and is about as small.
 */
export function deflateRuns(runs: ReadonlyArray<readonly [bytes: Buffer, times: number]>): Deflated {
  const pieces: Buffer[] = [];
  let crc = 0;
  let size = 0;
  for (const [bytes, times] of runs) {
    if (times <= 0 || bytes.length === 0) continue;
    const deflated = deflateRawSync(bytes, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
    for (let i = 0; i < times; i++) {
      pieces.push(deflated);
      crc = crc32(bytes, crc);
    }
    size += bytes.length * times;
  }
  pieces.push(deflateRawSync(Buffer.alloc(0), { level: 9 }));
  return { data: Buffer.concat(pieces), crc, size };
}

function deflateEntry(entry: BombEntry): Deflated {
  const padBytes = entry.padBytes ?? 0;
  const pad = Buffer.alloc(Math.min(CHUNK, padBytes), entry.padByte ?? 0x20);
  return deflateRuns([
    [Buffer.from(entry.head), 1],
    [pad, Math.floor(padBytes / CHUNK)],
    [pad.subarray(0, padBytes % CHUNK), 1],
    [Buffer.from(entry.tail ?? ''), 1],
  ]);
}

/** A zip of deflated entries (no zip64: every size stays under 4 GB). */
export async function bombZip(entries: BombEntry[]): Promise<Buffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const { data, crc, size } = deflateEntry(entry);
    const declared = entry.declaredSize ?? size;
    const local = Buffer.alloc(30 + name.length);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(name.length, 26);
    name.copy(local, 30);
    const central = Buffer.alloc(46 + name.length);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    name.copy(central, 46);
    locals.push(local, data);
    centrals.push(central);
    offset += local.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const MAIN = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

function inline(ref: string, text: string): string {
  return `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
}

export interface BombBookOptions {
  /** Bytes of padding in each sheet. */
  padBytes: number;
  /** How many sheets carry the padding (the first is the survey). */
  sheets?: number;
  /** Headers claim each padded sheet is this size. */
  declaredSize?: number;
  /** The byte the sheets are padded with (a space by default). */
  padByte?: number;
  /** The first sheet's XML before and after its padding, instead of the one-question survey's. */
  sheetHead?: string;
  sheetTail?: string;
  /** More parts, such as xl/sharedStrings.xml. */
  parts?: BombEntry[];
}

/** The start of a worksheet part, up to and including `<sheetData>`. */
export const SHEET_START = `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`;
export const SHEET_END = '</sheetData></worksheet>';

/**
 * An .xlsx XLSForm (a survey with one text question) whose sheets are padded with spaces
 * between rows: a valid workbook that inflates to `padBytes` per sheet.
 */
export async function bombWorkbook(options: BombBookOptions): Promise<Buffer> {
  const count = options.sheets ?? 1;
  const names = Array.from({ length: count }, (_, i) => (i === 0 ? 'survey' : `padding${i}`));
  const sheets = names.map((name, i): BombEntry => {
    const rows = i === 0 ? `<row r="1">${inline('A1', 'type')}${inline('B1', 'name')}${inline('C1', 'label')}</row>` : '';
    const last = i === 0 ? `<row r="2">${inline('A2', 'text')}${inline('B2', 'q')}${inline('C2', 'Q')}</row>` : '';
    const entry: BombEntry = {
      name: `xl/worksheets/sheet${i + 1}.xml`,
      head: i === 0 && options.sheetHead !== undefined ? options.sheetHead : `${SHEET_START}${rows}`,
      padBytes: options.padBytes,
      tail: i === 0 && options.sheetTail !== undefined ? options.sheetTail : `${last}${SHEET_END}`,
    };
    if (options.padByte !== undefined) entry.padByte = options.padByte;
    if (options.declaredSize !== undefined) entry.declaredSize = options.declaredSize;
    return entry;
  });
  return bombZip([
    {
      name: '[Content_Types].xml',
      head: `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${names.map((_, i) => `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join('')}</Types>`,
    },
    { name: '_rels/.rels', head: `<?xml version="1.0"?><Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>` },
    {
      name: 'xl/workbook.xml',
      head: `<?xml version="1.0"?><workbook ${MAIN} xmlns:r="${REL}"><sheets>${names.map((name, i) => `<sheet name="${name}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      head: `<?xml version="1.0"?><Relationships xmlns="${PKG_REL}">${names.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('')}</Relationships>`,
    },
    ...sheets,
    ...(options.parts ?? []),
  ]);
}
