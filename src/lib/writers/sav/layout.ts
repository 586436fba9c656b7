// Resolves the caller's variables into what the file needs: final names, widths, formats and
// the position of every 8-byte slot in a case. A string wider than 255 bytes ("very long")
// is stored as several segments, each a string variable of at most 255 bytes.
import { shortNamesFor, uniqueSpssNames } from './names.ts';
import type { SavMeasure, SavNumericFormat, SavValueLabel, SavVariable } from './types.ts';

export const MAX_STRING_WIDTH = 32_767;
const MAX_SEGMENT_WIDTH = 255;
/** A very long string gets one segment per 252 bytes of width, each but the last 255 wide. */
const BYTES_PER_SEGMENT = 252;
/** Segment data is packed this tightly: 255 bytes of the value in each full segment. */
const DATA_PER_SEGMENT = 255;

/** Format type codes of the variable record's print and write fields. */
const FORMAT_CODES = { A: 1, F: 5, DATE: 20, TIME: 21, DATETIME: 22 } as const;

export interface Segment {
  readonly shortName: string;
  /** String width of this segment's variable record; 0 for a numeric. */
  readonly width: number;
  /** Print and write format, packed as the variable record wants it. */
  readonly formatCode: number;
  /** Index of its first 8-byte slot in a case (0-based; the dictionary index minus one). */
  readonly firstSlot: number;
  readonly slotCount: number;
  /** Which bytes of the full value this segment stores. */
  readonly dataStart: number;
  readonly dataLength: number;
}

export interface ResolvedVariable {
  readonly name: string;
  readonly label: string | undefined;
  readonly type: 'numeric' | 'string';
  /** 0 for numerics. */
  readonly width: number;
  readonly format: SavNumericFormat | 'A';
  readonly displayWidth: number;
  readonly measure: SavMeasure;
  readonly valueLabels: ReadonlyArray<SavValueLabel>;
  readonly segments: ReadonlyArray<Segment>;
}

export interface Layout {
  readonly variables: ReadonlyArray<ResolvedVariable>;
  /** The number of 8-byte slots per case (the header's nominal case size). */
  readonly slotCount: number;
}

function segmentWidths(width: number): number[] {
  if (width <= MAX_SEGMENT_WIDTH) return [width];
  const count = Math.ceil(width / BYTES_PER_SEGMENT);
  const widths: number[] = new Array<number>(count - 1).fill(MAX_SEGMENT_WIDTH);
  widths.push(width - (count - 1) * BYTES_PER_SEGMENT);
  return widths;
}

function packFormat(type: number, width: number, decimals: number): number {
  return (type << 16) | (width << 8) | decimals;
}

function numericFormat(format: SavNumericFormat, requestedDecimals: number | undefined): { width: number; code: number } {
  const clamp = (d: number, max: number): number => (Number.isFinite(d) ? Math.max(0, Math.min(max, Math.trunc(d))) : 0);
  switch (format) {
    case 'F': {
      const decimals = clamp(requestedDecimals ?? 2, 16);
      const width = Math.max(8, decimals + 6);
      return { width, code: packFormat(FORMAT_CODES.F, width, decimals) };
    }
    case 'DATE':
      // dd-mmm-yyyy
      return { width: 11, code: packFormat(FORMAT_CODES.DATE, 11, 0) };
    case 'DATETIME': {
      // dd-mmm-yyyy hh:mm:ss[.fff]
      const decimals = clamp(requestedDecimals ?? 0, 6);
      const width = decimals === 0 ? 20 : 21 + decimals;
      return { width, code: packFormat(FORMAT_CODES.DATETIME, width, decimals) };
    }
    case 'TIME': {
      // hh:mm:ss[.fff]
      const decimals = clamp(requestedDecimals ?? 0, 6);
      const width = decimals === 0 ? 8 : 9 + decimals;
      return { width, code: packFormat(FORMAT_CODES.TIME, width, decimals) };
    }
  }
}

function stringWidth(variable: SavVariable, defaultWidth: number): number {
  const given = variable.width;
  const requested = given === undefined || !Number.isFinite(given) || given <= 0 ? defaultWidth : given;
  return Math.max(1, Math.min(MAX_STRING_WIDTH, Math.trunc(requested)));
}

export function resolveLayout(variables: ReadonlyArray<SavVariable>, defaultStringWidth: number): Layout {
  // Readers refuse a dictionary without variables, so such a file could never be opened.
  if (variables.length === 0) throw new RangeError('a .sav file needs at least one variable');
  const names = uniqueSpssNames(variables.map((v) => v.name));
  const widths = variables.map((v) => (v.type === 'string' ? stringWidth(v, defaultStringWidth) : 0));
  const widthsBySegment = widths.map(segmentWidths);
  const shortNames = shortNamesFor(names, widthsBySegment.map((w) => w.length));

  let slot = 0;
  const resolved = variables.map((variable, index): ResolvedVariable => {
    const name = names[index] ?? variable.name;
    const width = widths[index] ?? 0;
    const isString = variable.type === 'string';
    const format = isString ? 'A' : (variable.format ?? 'F');
    const numeric = format === 'A' ? undefined : numericFormat(format, variable.decimals);
    const segments = (widthsBySegment[index] ?? [0]).map((segmentWidth, segmentIndex): Segment => {
      const slotCount = segmentWidth === 0 ? 1 : Math.ceil(segmentWidth / 8);
      const dataStart = Math.min(width, segmentIndex * DATA_PER_SEGMENT);
      const segment: Segment = {
        shortName: shortNames[index]?.[segmentIndex] ?? `V${slot}`,
        width: segmentWidth,
        formatCode: numeric?.code ?? packFormat(FORMAT_CODES.A, segmentWidth, 0),
        firstSlot: slot,
        slotCount,
        dataStart,
        dataLength: Math.min(segmentWidth, width - dataStart),
      };
      slot += slotCount;
      return segment;
    });
    const valueLabels = variable.valueLabels ?? [];
    return {
      name,
      // Keep the caller's name visible when it had to change and no label says otherwise.
      label: variable.label !== undefined && variable.label !== '' ? variable.label : name === variable.name ? undefined : variable.name,
      type: variable.type,
      width,
      format,
      displayWidth: numeric?.width ?? Math.min(width, 40),
      measure: variable.measure ?? (isString || valueLabels.length > 0 ? 'nominal' : 'scale'),
      valueLabels,
      segments,
    };
  });
  return { variables: resolved, slotCount: slot };
}
