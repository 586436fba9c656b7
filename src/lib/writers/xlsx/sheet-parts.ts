// Splits sheets into parts that fit a format's limits, for both spreadsheet writers. A sheet with
// more rows than the format allows continues on further sheets named `name (2)`, `name (3)`, …,
// each starting with the sheet's repeated header rows. A row wider than the format allows is
// refused (SpreadsheetLimitError): a column cannot be continued honestly elsewhere.
import type { Cell, SheetSource } from './cell.ts';
import { SheetNames } from './sheet-names.ts';

export interface SheetLimits {
  readonly maxRows: number;
  readonly maxColumns: number;
}

export class SpreadsheetLimitError extends Error {
  constructor(
    message: string,
    readonly sheet: string,
  ) {
    super(message);
    this.name = 'SpreadsheetLimitError';
  }
}

export interface SheetPart {
  readonly name: string;
  /** Must be read to its end before the next part is asked for. */
  readonly rows: AsyncGenerator<readonly Cell[], void, undefined>;
}

type RowIterator = Iterator<readonly Cell[]> | AsyncIterator<readonly Cell[]>;

function rowIterator(rows: Iterable<readonly Cell[]> | AsyncIterable<readonly Cell[]>): RowIterator {
  return Symbol.asyncIterator in rows ? rows[Symbol.asyncIterator]() : rows[Symbol.iterator]();
}

/** Number of cells once trailing blanks are dropped. */
function usedWidth(row: readonly Cell[]): number {
  let width = row.length;
  while (width > 0) {
    const last = row[width - 1];
    if (last !== null && last !== undefined && last !== '') break;
    width -= 1;
  }
  return width;
}

/** The row cut to the format's width; refused (SpreadsheetLimitError) if cells past it hold values. */
export function fitRow(row: readonly Cell[], limits: SheetLimits, sheetName: string): readonly Cell[] {
  if (row.length <= limits.maxColumns) return row;
  const used = usedWidth(row);
  if (used > limits.maxColumns) {
    throw new SpreadsheetLimitError(`sheet "${sheetName}" has ${used} columns; the format allows ${limits.maxColumns}`, sheetName);
  }
  return row.slice(0, limits.maxColumns);
}

export async function* sheetParts(
  sheets: SheetSource,
  limits: SheetLimits,
  names: SheetNames = new SheetNames(),
): AsyncGenerator<SheetPart, void, undefined> {
  for await (const sheet of sheets) {
    const iterator = rowIterator(sheet.rows);
    const baseName = names.claim(sheet.name);
    const repeat = Math.max(0, Math.min(sheet.repeatRows ?? 0, limits.maxRows - 1));
    const header: Array<readonly Cell[]> = [];
    let pending: readonly Cell[] | undefined;
    let exhausted = false;
    let finished: boolean | undefined;

    async function* partRows(part: number, name: string): AsyncGenerator<readonly Cell[], void, undefined> {
      let count = 0;
      if (part > 1) {
        for (const row of header) {
          yield row;
          count += 1;
        }
      }
      if (pending !== undefined) {
        const row = pending;
        pending = undefined;
        yield fitRow(row, limits, name);
        count += 1;
      }
      while (count < limits.maxRows) {
        const next = await iterator.next();
        if (next.done === true) {
          exhausted = true;
          finished = true;
          return;
        }
        const row = fitRow(next.value, limits, name);
        if (part === 1 && header.length < repeat) header.push([...row]);
        yield row;
        count += 1;
      }
      // Full: is there more for a next part?
      const next = await iterator.next();
      if (next.done === true) exhausted = true;
      else pending = next.value;
      finished = true;
    }

    try {
      for (let part = 1; ; part += 1) {
        const name = part === 1 ? baseName : names.continuation(baseName, part);
        finished = false;
        yield { name, rows: partRows(part, name) };
        if (!finished) throw new Error(`sheet part "${name}" was not read to its end`);
        if (exhausted) break;
      }
    } finally {
      if (!exhausted) await iterator.return?.();
    }
  }
}
