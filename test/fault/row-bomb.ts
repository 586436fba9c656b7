// A zip bomb shaped as a real XLSForm: a survey sheet of one row repeated until it inflates to
// hundreds of megabytes, deflated piece by piece (never held whole) into an .xlsx of a few MB.
// (packages/xlsform/test/zip-bomb.ts pads sheets with one repeated byte; this one repeats rows,
// which every reader must parse as rows rather than skip as whitespace.)
import { deflateRuns } from '../../packages/xlsform/test/zip-bomb.ts';

const CHUNK = 1024 * 1024;
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

function cell(text: string): string {
  return `<c t="inlineStr"><is><t>${text}</t></is></c>`;
}

function row(cells: readonly string[]): string {
  return `<row>${cells.map(cell).join('')}</row>`;
}

interface Part {
  name: string;
  data: Buffer;
  crc: number;
  size: number;
}

/** Deflates `head`, then `repeat` over and over up to `repeatBytes`, then `tail`. */
function deflatePart(name: string, head: string, repeat: string, repeatBytes: number, tail: string): Part {
  const piece = Buffer.from(repeat.repeat(Math.max(1, Math.floor(CHUNK / repeat.length))));
  return { name, ...deflateRuns([[Buffer.from(head), 1], [piece, Math.floor(repeatBytes / piece.length)], [Buffer.from(tail), 1]]) };
}

function plainPart(name: string, text: string): Part {
  return deflatePart(name, text, ' ', 0, '');
}

/** The zip of the parts; `declaredSize` replaces every size the headers give for the big part. */
function zip(parts: readonly Part[], lie: { name: string; declaredSize: number } | undefined): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const name = Buffer.from(part.name);
    const declared = lie?.name === part.name ? lie.declaredSize : part.size;
    const local = Buffer.alloc(30 + name.length);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(part.crc >>> 0, 14);
    local.writeUInt32LE(part.data.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(name.length, 26);
    name.copy(local, 30);
    const central = Buffer.alloc(46 + name.length);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(part.crc >>> 0, 16);
    central.writeUInt32LE(part.data.length, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    name.copy(central, 46);
    locals.push(local, part.data);
    centrals.push(central);
    offset += local.length + part.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export interface RowBomb {
  /** Sizes in the headers are true: a reader can refuse it from the directory alone. */
  readonly honest: Buffer;
  /** The survey sheet claims to be 64 KB: only inflating it shows what it is. */
  readonly lying: Buffer;
  /** What the survey sheet inflates to. */
  readonly inflatedBytes: number;
}

/**
 * An XLSForm whose survey sheet, after its header, repeats `rowCells` as one row for `sheetBytes`.
 * `rowCells` of `text, q, Q` make a form of millions of questions; data values make a sheet of
 * millions of records for a record import.
 */
export async function rowBomb(sheetBytes: number, header: readonly string[], rowCells: readonly string[]): Promise<RowBomb> {
  const sheetName = 'xl/worksheets/sheet1.xml';
  const sheet = deflatePart(sheetName, `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>${row(header)}`, row(rowCells), sheetBytes, '</sheetData></worksheet>');
  const parts = [
    plainPart(
      '[Content_Types].xml',
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
    ),
    plainPart('_rels/.rels', `<?xml version="1.0"?><Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`),
    plainPart('xl/workbook.xml', `<?xml version="1.0"?><workbook xmlns="${MAIN}" xmlns:r="${REL}"><sheets><sheet name="survey" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    plainPart('xl/_rels/workbook.xml.rels', `<?xml version="1.0"?><Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`),
    sheet,
  ];
  return { honest: zip(parts, undefined), lying: zip(parts, { name: sheetName, declaredSize: 64 * 1024 }), inflatedBytes: sheet.size };
}
