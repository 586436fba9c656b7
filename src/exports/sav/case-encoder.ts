// Turns one row of values into the uncompressed bytes of a case: one 8-byte slot per
// numeric, strings padded with spaces to whole slots, very long strings spread over segments.
import { spssDateFromIso, spssDateTimeFromIso, spssTimeFromIso } from './dates.ts';
import { SYSMIS } from './dictionary.ts';
import type { Layout, ResolvedVariable } from './layout.ts';
import type { SavCell, SavRow } from './types.ts';
import { encodeUtf8Into } from './utf8.ts';

const SPACE = 0x20;

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

export class CaseEncoder {
  /** The case being built; reused for every row. */
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  /** Holds a very long string's full value before it is spread over its segments. */
  private readonly scratch: Uint8Array;

  constructor(private readonly layout: Layout) {
    this.bytes = new Uint8Array(layout.slotCount * 8);
    this.view = new DataView(this.bytes.buffer);
    const widest = layout.variables.reduce((max, v) => (v.segments.length > 1 ? Math.max(max, v.width) : max), 0);
    this.scratch = new Uint8Array(widest);
  }

  encode(row: SavRow): Uint8Array {
    const { variables } = this.layout;
    for (let index = 0; index < variables.length; index += 1) {
      const variable = variables[index];
      if (variable === undefined) continue;
      const cell = row[index];
      if (variable.type === 'numeric') {
        this.view.setFloat64((variable.segments[0]?.firstSlot ?? 0) * 8, toNumber(variable, cell), true);
      } else {
        this.encodeString(variable, cell === null || cell === undefined ? '' : String(cell));
      }
    }
    return this.bytes;
  }

  private encodeString(variable: ResolvedVariable, text: string): void {
    const { segments } = variable;
    const only = segments.length === 1 ? segments[0] : undefined;
    if (only !== undefined) {
      const start = only.firstSlot * 8;
      const end = start + only.slotCount * 8;
      const written = text === '' ? 0 : encodeUtf8Into(text, this.bytes.subarray(start, start + variable.width));
      this.bytes.fill(SPACE, start + written, end);
      return;
    }
    const value = this.scratch.subarray(0, variable.width);
    const written = text === '' ? 0 : encodeUtf8Into(text, value);
    value.fill(SPACE, written);
    for (const segment of segments) {
      const start = segment.firstSlot * 8;
      this.bytes.set(value.subarray(segment.dataStart, segment.dataStart + segment.dataLength), start);
      this.bytes.fill(SPACE, start + segment.dataLength, start + segment.slotCount * 8);
    }
  }
}
