// Cells as the spreadsheet readers hand them over, before they become text.

export interface RawCell {
  v: string | number | boolean;
  /** A number shown with a date/time format. */
  date?: boolean;
}

/** Rows of cells, indexed from 0 (row 1 of the sheet); holes are empty cells. */
export type RawGrid = Array<Array<RawCell | undefined> | undefined>;
