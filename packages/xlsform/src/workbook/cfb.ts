// Compound File Binary (OLE2), the container of legacy .xls files: just
// enough to pull one stream (the "Workbook") out of it.

export class CfbError extends Error {}

const SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const END_OF_CHAIN = 0xfffffffe;
const FREE = 0xffffffff;

export function readCfbStream(bytes: Uint8Array, wanted: readonly string[]): Uint8Array | undefined {
  if (bytes.length < 512 || SIGNATURE.some((b, i) => bytes[i] !== b)) throw new CfbError('not an OLE2 compound file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sectorSize = 1 << view.getUint16(0x1e, true);
  const miniSectorSize = 1 << view.getUint16(0x20, true);
  const fatSectorCount = view.getUint32(0x2c, true);
  const firstDirectory = view.getUint32(0x30, true);
  const miniCutoff = view.getUint32(0x38, true);
  const firstMiniFat = view.getUint32(0x3c, true);
  let difatSector = view.getUint32(0x44, true);
  const difatCount = view.getUint32(0x48, true);
  if (sectorSize !== 512 && sectorSize !== 4096) throw new CfbError('unsupported sector size');
  const sectorOffset = (n: number) => (n + 1) * sectorSize;

  // The FAT's own sectors are listed in the header (109) and in DIFAT sectors.
  const fatSectors: number[] = [];
  for (let i = 0; i < 109 && fatSectors.length < fatSectorCount; i++) fatSectors.push(view.getUint32(0x4c + i * 4, true));
  for (let d = 0; d < difatCount && difatSector !== END_OF_CHAIN && difatSector !== FREE; d++) {
    const base = sectorOffset(difatSector);
    if (base + sectorSize > bytes.length) throw new CfbError('truncated DIFAT');
    const per = sectorSize / 4 - 1;
    for (let i = 0; i < per && fatSectors.length < fatSectorCount; i++) fatSectors.push(view.getUint32(base + i * 4, true));
    difatSector = view.getUint32(base + per * 4, true);
  }
  const perSector = sectorSize / 4;
  const fat = new Uint32Array(fatSectors.length * perSector);
  fatSectors.forEach((s, i) => {
    const base = sectorOffset(s);
    if (base + sectorSize > bytes.length) throw new CfbError('truncated FAT');
    for (let j = 0; j < perSector; j++) fat[i * perSector + j] = view.getUint32(base + j * 4, true);
  });

  const chain = (start: number, table: Uint32Array): number[] => {
    const out: number[] = [];
    const seen = new Set<number>();
    for (let s = start; s !== END_OF_CHAIN && s !== FREE; s = table[s] ?? END_OF_CHAIN) {
      if (seen.has(s) || s >= table.length) throw new CfbError('corrupt sector chain');
      seen.add(s);
      out.push(s);
    }
    return out;
  };
  const readChain = (start: number, size: number): Uint8Array => {
    const out = new Uint8Array(size);
    let at = 0;
    for (const s of chain(start, fat)) {
      if (at >= size) break;
      const base = sectorOffset(s);
      const n = Math.min(sectorSize, size - at);
      if (base + n > bytes.length) throw new CfbError('truncated stream');
      out.set(bytes.subarray(base, base + n), at);
      at += n;
    }
    if (at < size) throw new CfbError('short stream');
    return out;
  };

  // Directory entries: 128 bytes each, in the directory's sector chain.
  const directorySectors = chain(firstDirectory, fat);
  const entries: Array<{ name: string; type: number; start: number; size: number }> = [];
  for (const s of directorySectors) {
    const base = sectorOffset(s);
    for (let off = 0; off + 128 <= sectorSize; off += 128) {
      const e = base + off;
      if (e + 128 > bytes.length) break;
      const nameLength = view.getUint16(e + 0x40, true);
      let name = '';
      for (let i = 0; i + 2 < nameLength && i < 64; i += 2) name += String.fromCharCode(view.getUint16(e + i, true));
      entries.push({ name, type: bytes[e + 0x42] ?? 0, start: view.getUint32(e + 0x74, true), size: view.getUint32(e + 0x78, true) });
    }
  }
  const root = entries.find((e) => e.type === 5);
  const entry = entries.find((e) => e.type === 2 && wanted.includes(e.name));
  if (!entry) return undefined;
  if (entry.size >= miniCutoff || !root) return readChain(entry.start, entry.size);

  // Small streams live in the mini stream (the root entry's data), chained by the mini FAT.
  const miniStream = readChain(root.start, root.size);
  const miniFatSectors = chain(firstMiniFat, fat);
  const miniFat = new Uint32Array(miniFatSectors.length * perSector);
  miniFatSectors.forEach((s, i) => {
    const base = sectorOffset(s);
    for (let j = 0; j < perSector; j++) miniFat[i * perSector + j] = view.getUint32(base + j * 4, true);
  });
  const out = new Uint8Array(entry.size);
  let at = 0;
  for (const s of chain(entry.start, miniFat)) {
    if (at >= entry.size) break;
    const base = s * miniSectorSize;
    const n = Math.min(miniSectorSize, entry.size - at);
    if (base + n > miniStream.length) throw new CfbError('truncated mini stream');
    out.set(miniStream.subarray(base, base + n), at);
    at += n;
  }
  return out;
}
