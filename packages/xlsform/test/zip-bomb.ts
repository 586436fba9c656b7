// Zip bombs for tests: archives whose entries inflate to hundreds of megabytes from a few hundred
// kilobytes. The padding is deflated from one reused chunk, so building a 500 MB entry never holds
// more than that chunk and the compressed output in memory.
import { createDeflateRaw, crc32 } from 'node:zlib';

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

interface Deflated {
  data: Buffer;
  crc: number;
  size: number;
}

async function deflateEntry(entry: BombEntry): Promise<Deflated> {
  const deflater = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflater.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    deflater.once('end', resolve);
    deflater.once('error', reject);
  });
  let crc = 0;
  let size = 0;
  const write = async (bytes: Buffer): Promise<void> => {
    crc = crc32(bytes, crc);
    size += bytes.length;
    if (!deflater.write(bytes)) await new Promise((resolve) => deflater.once('drain', resolve));
  };
  await write(Buffer.from(entry.head));
  const pad = Buffer.alloc(CHUNK, entry.padByte ?? 0x20);
  for (let left = entry.padBytes ?? 0; left > 0; left -= CHUNK) await write(left >= CHUNK ? pad : pad.subarray(0, left));
  if (entry.tail) await write(Buffer.from(entry.tail));
  deflater.end();
  await done;
  return { data: Buffer.concat(out), crc, size };
}

/** A zip of deflated entries (no zip64: every size stays under 4 GB). */
export async function bombZip(entries: BombEntry[]): Promise<Buffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const { data, crc, size } = await deflateEntry(entry);
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
