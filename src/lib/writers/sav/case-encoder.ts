// Turns one row of values into the slots of a case, handed to a sink: one 8-byte slot per
// numeric, strings padded with blanks to whole slots, very long strings spread over segments.
import type { CaseSink } from './case-sinks.ts';
import { spssDateFromIso, spssDateTimeFromIso, spssTimeFromIso } from './dates.ts';
import { SYSMIS } from './constants.ts';
import type { Layout, ResolvedVariable } from './layout.ts';
import type { SavCell, SavRow } from './types.ts';
import { encodeUtf8Into } from './utf8.ts';

/** A numeric cell as a double; anything that is not a finite number becomes system-missing, never 0. */
function toNumber(variable: ResolvedVariable, cell: SavCell): number {
  if (typeof cell === 'number') return Number.isFinite(cell) ? cell : SYSMIS;
  if (typeof cell !== 'string') return SYSMIS;
  const text = cell.trim();
  if (text === '') return SYSMIS;
  let parsed: number | null;
  switch (variable.format) {
    case 'DATE': parsed = spssDateFromIso(text); break;
    case 'DATETIME': parsed = spssDateTimeFromIso(text); break;
    case 'TIME': parsed = spssTimeFromIso(text); break;
    default: parsed = Number(text);
  }
  return parsed !== null && Number.isFinite(parsed) ? parsed : SYSMIS;
}

/**
 * Copies ASCII text that fits into `target` and returns its length; -1 (nothing decided) for
 * longer text or any other character. Most answers are short ASCII, and a native encodeInto call
 * costs more than their few bytes.
 */
function asciiInto(text: string, target: Uint8Array): number {
  const length = text.length;
  if (length > target.length) return -1;
  for (let i = 0; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 128) return -1;
    target[i] = code;
  }
  return length;
}

export class CaseEncoder {
  /** Each string variable's value is encoded here first, cut to its width. */
  private readonly scratch: Uint8Array;
  /** Per variable, a view of `scratch` exactly as wide as the variable (unused for numerics). */
  private readonly views: Uint8Array[];

  constructor(private readonly layout: Layout) {
    const widest = layout.variables.reduce((max, v) => Math.max(max, v.width), 0);
    this.scratch = new Uint8Array(widest);
    this.views = layout.variables.map((v) => this.scratch.subarray(0, v.width));
  }

  encode(row: SavRow, sink: CaseSink): void {
    sink.beginCase();
    const count = this.layout.variables.length;
    for (let index = 0; index < count; index += 1) this.cell(index, row[index], sink);
  }

  /** Variable `index`'s value into the case begun in `sink` (variables come in order, each once). */
  cell(index: number, cell: SavCell, sink: CaseSink): void {
    const variable = this.layout.variables[index];
    if (variable === undefined) return;
    if (variable.type === 'numeric') {
      sink.number(toNumber(variable, cell));
      return;
    }
    const text = cell === null || cell === undefined ? '' : typeof cell === 'string' ? cell : String(cell);
    const view = this.views[index] ?? this.scratch;
    let written = text === '' ? 0 : asciiInto(text, view);
    if (written < 0) written = encodeUtf8Into(text, view);
    for (const segment of variable.segments) {
      const used = Math.max(0, Math.min(segment.dataLength, written - segment.dataStart));
      sink.text(this.scratch, segment.dataStart, used, segment.slotCount);
    }
  }

  /**
   * Variable `index`'s value from the UTF-8 bytes src[start..end) of a string: copied from them
   * when the variable is a string as wide at least and the bytes are ASCII, else decoded first.
   */
  textBytes(index: number, src: Uint8Array, start: number, end: number, sink: CaseSink): void {
    const variable = this.layout.variables[index];
    if (variable === undefined) return;
    const length = end - start;
    if (variable.type === 'string' && length <= variable.width) {
      let i = start;
      while (i < end && (src[i] as number) < 128) i += 1;
      if (i === end) {
        for (const segment of variable.segments) {
          const used = Math.max(0, Math.min(segment.dataLength, length - segment.dataStart));
          sink.text(src, start + segment.dataStart, used, segment.slotCount);
        }
        return;
      }
    }
    this.cell(index, Buffer.from(src.buffer, src.byteOffset, src.byteLength).toString('utf8', start, end), sink);
  }
}
