// BIFF8 records, as described in Microsoft's [MS-XLS]: just the ones a data export needs.
// Each function returns a whole record (4-byte header + payload).

export const RECORD = {
  BOF: 0x0809,
  EOF: 0x000a,
  CODEPAGE: 0x0042,
  DATEMODE: 0x0022,
  WINDOW1: 0x003d,
  FONT: 0x0031,
  FORMAT: 0x041e,
  XF: 0x00e0,
  STYLE: 0x0293,
  BOUNDSHEET: 0x0085,
  SST: 0x00fc,
  CONTINUE: 0x003c,
  DIMENSIONS: 0x0200,
  WINDOW2: 0x023e,
  NUMBER: 0x0203,
  LABEL: 0x0204,
  LABELSST: 0x00fd,
  BOOLERR: 0x0205,
} as const;

/** Largest record payload BIFF8 allows; longer data continues in CONTINUE records. */
export const MAX_PAYLOAD = 8224;
/** Characters a LABEL record may hold; longer strings go to the shared-string table. */
export const MAX_LABEL_CHARS = 255;

/** XF indexes: 0–14 are style XFs, 15 the default cell XF, then ours. */
export const XF_GENERAL = 15;
export const XF_DATE = 16;
export const XF_DATETIME = 17;

export function record(type: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeUInt16LE(type, 0);
  out.writeUInt16LE(payload.length, 2);
  out.set(payload, 4);
  return out;
}

/** Whether every UTF-16 unit fits in one byte (BIFF's "compressed" strings). */
export function isCompressible(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}

/** Characters of an XLUnicodeString: flag byte, then Latin-1 or UTF-16LE. */
export function stringBody(text: string): Buffer {
  if (isCompressible(text)) {
    const out = Buffer.allocUnsafe(1 + text.length);
    out[0] = 0;
    out.write(text, 1, 'latin1');
    return out;
  }
  const out = Buffer.allocUnsafe(1 + text.length * 2);
  out[0] = 1;
  out.write(text, 1, 'utf16le');
  return out;
}

/** XLUnicodeString: 16-bit character count, flag, characters. */
export function unicodeString(text: string): Buffer {
  const count = Buffer.allocUnsafe(2);
  count.writeUInt16LE(text.length, 0);
  return Buffer.concat([count, stringBody(text)]);
}

/** ShortXLUnicodeString: 8-bit character count, flag, characters. */
export function shortUnicodeString(text: string): Buffer {
  return Buffer.concat([Buffer.from([text.length]), stringBody(text)]);
}

export function bof(kind: 'globals' | 'worksheet'): Buffer {
  const p = Buffer.alloc(16);
  p.writeUInt16LE(0x0600, 0); // BIFF8
  p.writeUInt16LE(kind === 'globals' ? 0x0005 : 0x0010, 2);
  p.writeUInt16LE(0x0dbb, 4); // build
  p.writeUInt16LE(0x07cc, 6); // year
  p.writeUInt32LE(0x00000041, 8); // file history flags
  p.writeUInt32LE(0x00000006, 12); // lowest BIFF version that can read all records
  return record(RECORD.BOF, p);
}

export function eof(): Buffer {
  return record(RECORD.EOF, new Uint8Array(0));
}

export function uint16Record(type: number, value: number): Buffer {
  const p = Buffer.alloc(2);
  p.writeUInt16LE(value, 0);
  return record(type, p);
}

export function window1(): Buffer {
  const p = Buffer.alloc(18);
  p.writeUInt16LE(0x0000, 0); // x
  p.writeUInt16LE(0x0000, 2); // y
  p.writeUInt16LE(0x4000, 4); // width
  p.writeUInt16LE(0x2000, 6); // height
  p.writeUInt16LE(0x0038, 8); // show scroll bars and sheet tabs
  p.writeUInt16LE(0, 10); // active sheet
  p.writeUInt16LE(0, 12); // first visible tab
  p.writeUInt16LE(1, 14); // selected tabs
  p.writeUInt16LE(0x0258, 16); // tab bar width ratio
  return record(RECORD.WINDOW1, p);
}

export function font(): Buffer {
  const p = Buffer.alloc(14);
  p.writeUInt16LE(200, 0); // 10 pt, in twips
  p.writeUInt16LE(0, 2);
  p.writeUInt16LE(0x7fff, 4); // automatic colour
  p.writeUInt16LE(400, 6); // normal weight
  return record(RECORD.FONT, Buffer.concat([p, shortUnicodeString('Arial')]));
}

export function format(index: number, code: string): Buffer {
  const p = Buffer.alloc(2);
  p.writeUInt16LE(index, 0);
  return record(RECORD.FORMAT, Buffer.concat([p, unicodeString(code)]));
}

export function xf(options: { style: boolean; formatIndex: number }): Buffer {
  const p = Buffer.alloc(20);
  p.writeUInt16LE(0, 0); // font 0
  p.writeUInt16LE(options.formatIndex, 2);
  p.writeUInt16LE(options.style ? 0xfff5 : 0x0001, 4); // locked; style XFs have no parent
  p[6] = 0x20; // bottom-aligned
  p[9] = options.style ? 0 : options.formatIndex === 0 ? 0 : 0x04; // number format applied
  p.writeUInt16LE(0x20c0, 18); // pattern colours: automatic
  return record(RECORD.XF, p);
}

export function normalStyle(): Buffer {
  return record(RECORD.STYLE, Buffer.from([0x00, 0x80, 0x00, 0xff]));
}

/** BOUNDSHEET: the sheet's name and the stream offset of its BOF. */
export function boundSheet(offset: number, name: string): Buffer {
  const p = Buffer.alloc(6);
  p.writeUInt32LE(offset, 0);
  return record(RECORD.BOUNDSHEET, Buffer.concat([p, shortUnicodeString(name)]));
}

export function dimensions(rows: number, columns: number): Buffer {
  const p = Buffer.alloc(14);
  p.writeUInt32LE(0, 0);
  p.writeUInt32LE(rows, 4); // last row + 1
  p.writeUInt16LE(0, 8);
  p.writeUInt16LE(columns, 10); // last column + 1
  return record(RECORD.DIMENSIONS, p);
}

export function window2(selected: boolean): Buffer {
  const p = Buffer.alloc(18);
  // Grid lines, headers, zeros, automatic grid colour, outline symbols; the first sheet selected.
  p.writeUInt16LE(selected ? 0x06b6 : 0x00b6, 0);
  p.writeUInt16LE(64, 6); // grid colour index
  return record(RECORD.WINDOW2, p);
}
