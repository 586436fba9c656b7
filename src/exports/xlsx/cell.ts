// The cell values the spreadsheet writers accept. Until src/exports/layout/types.ts lands this
// mirrors its shape; the writers import Cell from here only.
export interface ExportDate {
  readonly kind: 'date' | 'datetime';
  /** `YYYY-MM-DD` for a date; `YYYY-MM-DDTHH:MM:SS[.fff][zone]` for a datetime (zone ignored). */
  readonly iso: string;
}

export type Cell = string | number | boolean | null | ExportDate;

/** One sheet of a workbook. Rows are pulled only once the previous sheet is finished. */
export interface SpreadsheetSheet {
  readonly name: string;
  readonly rows: Iterable<readonly Cell[]> | AsyncIterable<readonly Cell[]>;
  /**
   * Leading rows (headers) repeated at the top of each continuation sheet when the sheet has
   * more rows than the format allows. Default 0.
   */
  readonly repeatRows?: number;
}

export type SheetSource = Iterable<SpreadsheetSheet> | AsyncIterable<SpreadsheetSheet>;
