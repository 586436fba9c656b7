// The cell values the spreadsheet writers accept are the export layouts' (src/lib/writers/layout/types.ts).
import type { Cell } from '../layout/types.ts';

export type { Cell, ExportDate } from '../layout/types.ts';

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
