// A compound file (OLE2, [MS-CFB] version 3, 512-byte sectors) holding one stream, "Workbook",
// laid out as: header, allocation table (FAT) sectors, DIFAT sectors when the FAT needs more than
// the header's 109 slots, one directory sector, then the stream's sectors in one chain. Every
// table is a formula of the stream's size, so the tables are generated sector by sector rather
// than held in memory. Streams under 4,096 bytes would belong in the mini stream: the caller pads
// the workbook stream to 4,096 bytes instead (BIFF readers stop at the last EOF record).

const SECTOR = 512;
const PER_SECTOR = SECTOR / 4;
const HEADER_DIFAT = 109;
const FREE = 0xffffffff;
const END_OF_CHAIN = 0xfffffffe;
const FAT_SECTOR = 0xfffffffd;
const DIFAT_SECTOR = 0xfffffffc;
const NO_STREAM = 0xffffffff;

/** Smallest stream kept in regular sectors. */
export const MIN_STREAM_SIZE = 4096;
/** Version 3 files address at most 2^32 sectors, but readers commonly stop at 2 GiB. */
export const MAX_STREAM_SIZE = 0x7fffffff - 64 * 1024 * 1024;

export interface CfbLayout {
  readonly streamSectors: number;
  readonly fatSectors: number;
  readonly difatSectors: number;
  readonly directorySector: number;
  readonly firstStreamSector: number;
  readonly streamSize: number;
}

export function cfbLayout(streamSize: number): CfbLayout {
  if (streamSize < MIN_STREAM_SIZE) throw new Error(`cfb: stream of ${streamSize} bytes must be padded to ${MIN_STREAM_SIZE}`);
  const streamSectors = Math.ceil(streamSize / SECTOR);
  const difatFor = (fat: number): number => (fat > HEADER_DIFAT ? Math.ceil((fat - HEADER_DIFAT) / (PER_SECTOR - 1)) : 0);
  // The FAT covers itself and the DIFAT too: grow it until it fits.
  let fatSectors = 1;
  while (Math.ceil((fatSectors + difatFor(fatSectors) + 1 + streamSectors) / PER_SECTOR) > fatSectors) fatSectors += 1;
  const difatSectors = difatFor(fatSectors);
  const directorySector = fatSectors + difatSectors;
  return { streamSectors, fatSectors, difatSectors, directorySector, firstStreamSector: directorySector + 1, streamSize };
}

function header(layout: CfbLayout): Buffer {
  const h = Buffer.alloc(SECTOR, 0);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(h, 0);
  h.writeUInt16LE(0x003e, 0x18); // minor version
  h.writeUInt16LE(0x0003, 0x1a); // major version 3
  h.writeUInt16LE(0xfffe, 0x1c); // little-endian
  h.writeUInt16LE(9, 0x1e); // 512-byte sectors
  h.writeUInt16LE(6, 0x20); // 64-byte mini sectors
  h.writeUInt32LE(layout.fatSectors, 0x2c);
  h.writeUInt32LE(layout.directorySector, 0x30);
  h.writeUInt32LE(MIN_STREAM_SIZE, 0x38); // mini stream cut-off
  h.writeUInt32LE(END_OF_CHAIN, 0x3c); // no mini FAT
  h.writeUInt32LE(0, 0x40);
  h.writeUInt32LE(layout.difatSectors > 0 ? layout.fatSectors : END_OF_CHAIN, 0x44);
  h.writeUInt32LE(layout.difatSectors, 0x48);
  for (let i = 0; i < HEADER_DIFAT; i += 1) h.writeUInt32LE(i < layout.fatSectors ? i : FREE, 0x4c + i * 4);
  return h;
}

/** The FAT entry of sector `n`. */
function fatEntry(layout: CfbLayout, n: number): number {
  if (n < layout.fatSectors) return FAT_SECTOR;
  if (n < layout.directorySector) return DIFAT_SECTOR;
  if (n === layout.directorySector) return END_OF_CHAIN;
  const last = layout.firstStreamSector + layout.streamSectors - 1;
  if (n < last) return n + 1;
  if (n === last) return END_OF_CHAIN;
  return FREE;
}

function* fatSectors(layout: CfbLayout): Generator<Buffer> {
  const batch = 128; // sectors per chunk: 64 KiB
  for (let first = 0; first < layout.fatSectors; first += batch) {
    const count = Math.min(batch, layout.fatSectors - first);
    const out = Buffer.allocUnsafe(count * SECTOR);
    for (let i = 0; i < count * PER_SECTOR; i += 1) out.writeUInt32LE(fatEntry(layout, first * PER_SECTOR + i), i * 4);
    yield out;
  }
}

function* difatSectors(layout: CfbLayout): Generator<Buffer> {
  let fat = HEADER_DIFAT;
  for (let d = 0; d < layout.difatSectors; d += 1) {
    const out = Buffer.alloc(SECTOR);
    for (let i = 0; i < PER_SECTOR - 1; i += 1) {
      out.writeUInt32LE(fat < layout.fatSectors ? fat : FREE, i * 4);
      fat += 1;
    }
    const next = d + 1 < layout.difatSectors ? layout.fatSectors + d + 1 : END_OF_CHAIN;
    out.writeUInt32LE(next, (PER_SECTOR - 1) * 4);
    yield out;
  }
}

function directoryEntry(name: string, type: number, child: number, start: number, size: number): Buffer {
  const e = Buffer.alloc(128, 0);
  if (name !== '') {
    e.write(name, 0, 'utf16le');
    e.writeUInt16LE((name.length + 1) * 2, 0x40);
  }
  e[0x42] = type;
  if (type !== 0) e[0x43] = 1; // black; unused entries stay all zero but for the links
  e.writeUInt32LE(NO_STREAM, 0x44);
  e.writeUInt32LE(NO_STREAM, 0x48);
  e.writeUInt32LE(child, 0x4c);
  e.writeUInt32LE(start, 0x74);
  e.writeUInt32LE(size, 0x78);
  return e;
}

function directory(layout: CfbLayout): Buffer {
  return Buffer.concat([
    directoryEntry('Root Entry', 5, 1, END_OF_CHAIN, 0),
    directoryEntry('Workbook', 2, NO_STREAM, layout.firstStreamSector, layout.streamSize),
    directoryEntry('', 0, NO_STREAM, 0, 0),
    directoryEntry('', 0, NO_STREAM, 0, 0),
  ]);
}

/** Everything before the stream's first byte. */
export function* cfbPrologue(layout: CfbLayout): Generator<Buffer> {
  yield header(layout);
  yield* fatSectors(layout);
  yield* difatSectors(layout);
  yield directory(layout);
}

/** Zeros that complete the stream's last sector. */
export function cfbEpilogue(layout: CfbLayout): Buffer {
  return Buffer.alloc(layout.streamSectors * SECTOR - layout.streamSize, 0);
}
