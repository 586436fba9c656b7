// Cells as the spreadsheet readers hand them over, before they become text.

/** A number shown with a date/time format (an Excel date serial). */
export interface DateCell {
  date: number;
}

/** A cell's value; plain values need no object (big sheets have tens of thousands). */
export type RawCell = string | number | boolean | DateCell;

/** Rows of cells, indexed from 0 (row 1 of the sheet); holes are empty cells. */
export type RawGrid = Array<Array<RawCell | undefined> | undefined>;
