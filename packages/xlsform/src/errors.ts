// Internal failure signal. convert() catches it and returns it as a value;
// it never escapes the library.
import type { ConversionIssue } from './types.ts';

export class XlsFormError extends Error {
  readonly issue: ConversionIssue;
  constructor(message: string, location: Omit<ConversionIssue, 'message' | 'code'> & { code?: string } = {}) {
    super(message);
    const { code = 'xlsform', ...rest } = location;
    this.issue = { code, message, ...rest };
  }
}

/** pyxform's "[row : N]" prefix, kept so messages read the same as pyxform's. */
export function rowPrefix(row: number): string {
  return `[row : ${row}]`;
}
