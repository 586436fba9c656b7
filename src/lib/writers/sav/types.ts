import type { CasePiece } from './case-sinks.ts';
export type SavMeasure = 'nominal' | 'ordinal' | 'scale';
export type SavNumericFormat = 'F' | 'DATE' | 'DATETIME' | 'TIME';

export interface SavValueLabel {
  readonly value: number | string;
  readonly label: string;
}

export interface SavVariable {
  /** The caller's name; the writer turns it into a valid, unique SPSS name (see names.ts). */
  readonly name: string;
  /** Variable label (UTF-8, at most 255 bytes kept). Defaults to the caller's name when that had to be changed. */
  readonly label?: string;
  readonly type: 'numeric' | 'string';
  /** String width in bytes, 1 to 32767. Absent or 0: `defaultStringWidth` (255). Ignored for numerics. */
  readonly width?: number;
  /** Defaults: scale for numerics without value labels, nominal otherwise. */
  readonly measure?: SavMeasure;
  /** Numeric display format; dates and times hold seconds since 1582-10-14 (see dates.ts). */
  readonly format?: SavNumericFormat;
  /** Decimal places: default 2 for F, 0 for the date and time formats. */
  readonly decimals?: number;
  /** Labels for values; each label keeps at most 120 bytes (the SPSS limit). */
  readonly valueLabels?: ReadonlyArray<SavValueLabel>;
}

export interface SavWriterOptions {
  /** File label in the header, at most 64 bytes kept. */
  readonly fileLabel?: string;
  /** Bytecode compression ($FL2 simple compression); default true. */
  readonly compression?: boolean;
  /** Creation time written in the header (UTC); default: the current time. */
  readonly now?: Date;
  /** The number of rows, when known up front; `end()` throws if a different number was written. Default: unknown (-1). */
  readonly rowCount?: number;
  /** Width for string variables with no width (or 0); default 255, the widest single-segment string. */
  readonly defaultStringWidth?: number;
}

export type SavCell = number | string | null | undefined;
export type SavRow = ReadonlyArray<SavCell>;

/** Where a row the caller writes itself goes: every variable once, in order. */
export interface SavCaseOut {
  cell(index: number, cell: SavCell): void;
  /** A string's value as its UTF-8 bytes src[start..end). */
  textBytes(index: number, src: Uint8Array, start: number, end: number): void;
}

/** A row the caller writes variable by variable instead of giving its cells. */
export interface SavWrittenRow {
  write(out: SavCaseOut): void;
}

/** Cases encoded elsewhere (savCasePieces), joined into the file where they were begun to follow. */
export interface SavCasePieceRow {
  readonly piece: CasePiece;
  readonly cases: number;
}
