// The dictionary: file header, variable records, value labels and the extension records,
// up to and including the dictionary termination record (999). Record order follows the
// PSPP "System File Format" description: header, variables, value labels, then extension
// records by ascending subtype.
import { ByteWriter } from './byte-writer.ts';
import { COMPRESSION_BIAS, SYSMIS } from './constants.ts';
import type { Layout, ResolvedVariable } from './layout.ts';
import { encodeUtf8 } from './utf8.ts';


const SPACE = 0x20;
const PRODUCT = '@(#) SPSS DATA FILE Gather';
const MAX_VARIABLE_LABEL_BYTES = 255;
/** SPSS refuses value labels longer than 120 bytes. */
const MAX_VALUE_LABEL_BYTES = 120;
const MAX_SHORT_STRING = 8;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const MEASURE_CODES = { nominal: 1, ordinal: 2, scale: 3 } as const;
const ALIGN_LEFT = 0;
const ALIGN_RIGHT = 1;
/** LOWEST in missing-value ranges: the second-largest negative double, as older SPSS wrote it. */
const LOWEST = new DataView(new Uint8Array([0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0xff]).buffer).getFloat64(0, true);

export interface HeaderOptions {
  readonly fileLabel: string;
  readonly compressed: boolean;
  readonly caseCount: number;
  readonly now: Date;
}

const ascii = (text: string): Uint8Array => encodeUtf8(text);
const utf8Decoder = new TextDecoder();
const two = (n: number): string => String(n).padStart(2, '0');

function writeFileHeader(out: ByteWriter, layout: Layout, options: HeaderOptions): void {
  // An invalid date gets the placeholder the format description prescribes.
  const now = Number.isNaN(options.now.getTime()) ? new Date(0) : options.now;
  out.bytes(ascii('$FL2'));
  out.padded(ascii(PRODUCT), 60, SPACE);
  out.int32(2); // layout code: tells readers the integers are little-endian
  out.int32(layout.slotCount);
  out.int32(options.compressed ? 1 : 0);
  out.int32(0); // no weight variable
  out.int32(options.caseCount);
  out.float64(COMPRESSION_BIAS);
  const date = `${two(now.getUTCDate())} ${MONTHS[now.getUTCMonth()] ?? 'Jan'} ${two(now.getUTCFullYear() % 100)}`;
  out.padded(ascii(date), 9, SPACE);
  out.padded(ascii(`${two(now.getUTCHours())}:${two(now.getUTCMinutes())}:${two(now.getUTCSeconds())}`), 8, SPACE);
  out.padded(encodeUtf8(options.fileLabel, 64), 64, SPACE);
  out.fill(0, 3);
}

function writeVariableRecords(out: ByteWriter, variable: ResolvedVariable): void {
  variable.segments.forEach((segment, segmentIndex) => {
    const label = segmentIndex === 0 && variable.label !== undefined
      ? encodeUtf8(variable.label, MAX_VARIABLE_LABEL_BYTES)
      : undefined;
    out.int32(2);
    out.int32(segment.width);
    out.int32(label === undefined ? 0 : 1);
    out.int32(0); // no missing values
    out.int32(segment.formatCode);
    out.int32(segment.formatCode);
    out.padded(ascii(segment.shortName), 8, SPACE);
    if (label !== undefined) {
      out.int32(label.length);
      out.padded(label, Math.ceil(label.length / 4) * 4, SPACE);
    }
    // A string segment wider than 8 bytes continues in one nameless record per further 8 bytes.
    for (let slot = 1; slot < segment.slotCount; slot += 1) {
      out.int32(2);
      out.int32(-1);
      out.int32(0);
      out.int32(0);
      out.int32(0);
      out.int32(0);
      out.fill(SPACE, 8);
    }
  });
}

/** Labels with usable, distinct values: numbers for numerics, strings cut to the width for strings. */
function labelsByValue(variable: ResolvedVariable): Map<number | string, Uint8Array> {
  const labels = new Map<number | string, Uint8Array>();
  for (const { value, label } of variable.valueLabels) {
    let key: number | string;
    if (variable.type === 'numeric') {
      key = typeof value === 'number' ? value : value.trim() === '' ? Number.NaN : Number(value);
      if (!Number.isFinite(key)) continue;
    } else {
      key = utf8Decoder.decode(encodeUtf8(String(value), variable.width));
    }
    if (!labels.has(key)) labels.set(key, encodeUtf8(label, MAX_VALUE_LABEL_BYTES));
  }
  return labels;
}

/** Value label record (3) and its variables record (4), for numerics and strings of ≤ 8 bytes. */
function writeValueLabelRecords(out: ByteWriter, variable: ResolvedVariable, labels: Map<number | string, Uint8Array>): void {
  out.int32(3);
  out.int32(labels.size);
  for (const [value, label] of labels) {
    if (typeof value === 'number') out.float64(value);
    else out.padded(encodeUtf8(value), 8, SPACE);
    out.byte(label.length);
    // The length byte and the label together fill a multiple of 8 bytes.
    out.padded(label, Math.ceil((label.length + 1) / 8) * 8 - 1, SPACE);
  }
  out.int32(4);
  out.int32(1);
  out.int32((variable.segments[0]?.firstSlot ?? 0) + 1);
}

function writeExtensionHeader(out: ByteWriter, subtype: number, size: number, count: number): void {
  out.int32(7);
  out.int32(subtype);
  out.int32(size);
  out.int32(count);
}

function writeTextRecord(out: ByteWriter, subtype: number, text: Uint8Array): void {
  writeExtensionHeader(out, subtype, 1, text.length);
  out.bytes(text);
}

function writeMachineRecords(out: ByteWriter): void {
  writeExtensionHeader(out, 3, 4, 8);
  for (const value of [1, 0, 0, -1, 1, 1, 2, 65001]) out.int32(value); // version 1.0.0, IEEE 754, little-endian, UTF-8
  writeExtensionHeader(out, 4, 8, 3);
  out.float64(SYSMIS);
  out.float64(Number.MAX_VALUE);
  out.float64(LOWEST);
}

function writeDisplayParameters(out: ByteWriter, layout: Layout): void {
  const segmentCount = layout.variables.reduce((n, v) => n + v.segments.length, 0);
  writeExtensionHeader(out, 11, 4, segmentCount * 3);
  for (const variable of layout.variables) {
    for (const _segment of variable.segments) {
      out.int32(MEASURE_CODES[variable.measure]);
      out.int32(variable.displayWidth);
      out.int32(variable.type === 'numeric' ? ALIGN_RIGHT : ALIGN_LEFT);
    }
  }
}

function writeLongNames(out: ByteWriter, layout: Layout): void {
  const pairs = layout.variables.map((v) => `${v.segments[0]?.shortName ?? ''}=${v.name}`);
  writeTextRecord(out, 13, encodeUtf8(pairs.join('\t')));
}

function writeVeryLongStrings(out: ByteWriter, layout: Layout): void {
  const entries = layout.variables
    .filter((v) => v.segments.length > 1)
    .map((v) => `${v.segments[0]?.shortName ?? ''}=${String(v.width).padStart(5, '0')}\0\t`);
  if (entries.length > 0) writeTextRecord(out, 14, encodeUtf8(entries.join('')));
}

function writeLongStringValueLabels(out: ByteWriter, entries: ReadonlyArray<[ResolvedVariable, Map<number | string, Uint8Array>]>): void {
  if (entries.length === 0) return;
  const body = new ByteWriter();
  for (const [variable, labels] of entries) {
    const name = encodeUtf8(variable.name);
    body.int32(name.length);
    body.bytes(name);
    body.int32(variable.width);
    body.int32(labels.size);
    for (const [value, label] of labels) {
      body.int32(variable.width);
      body.padded(encodeUtf8(String(value)), variable.width, SPACE);
      body.int32(label.length);
      body.bytes(label);
    }
  }
  writeTextRecord(out, 21, body.toBytes());
}

export function encodeDictionary(layout: Layout, options: HeaderOptions): Uint8Array {
  const out = new ByteWriter(64 * 1024);
  writeFileHeader(out, layout, options);
  for (const variable of layout.variables) writeVariableRecords(out, variable);

  const longStringLabels: Array<[ResolvedVariable, Map<number | string, Uint8Array>]> = [];
  for (const variable of layout.variables) {
    const labels = labelsByValue(variable);
    if (labels.size === 0) continue;
    if (variable.width > MAX_SHORT_STRING) longStringLabels.push([variable, labels]);
    else writeValueLabelRecords(out, variable, labels);
  }

  writeMachineRecords(out);
  writeDisplayParameters(out, layout);
  writeLongNames(out, layout);
  writeVeryLongStrings(out, layout);
  writeTextRecord(out, 20, encodeUtf8('UTF-8'));
  writeLongStringValueLabels(out, longStringLabels);
  out.int32(999);
  out.int32(0);
  return out.toBytes();
}
