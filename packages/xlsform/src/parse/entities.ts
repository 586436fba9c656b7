// The entities sheet (ODK entities): declarations that a submission creates or
// updates an entity, written into the meta block.
import { XlsFormError } from '../errors.ts';
import type { JsonObject } from '../types.ts';
import type { Workbook } from '../workbook/model.ts';
import { SUPPRESS_SPELLING_HINT, sheetMisspelling } from './json-helpers.ts';

export interface EntityContext {
  noteRow(depth: number, row: JsonObject, rowNumber: number, name: string | undefined, isBegin: boolean, isEnd: boolean): void;
  pushContainer(type: string, name: string): void;
  popContainer(): void;
  hasDataset(name: string): boolean;
  apply(json: JsonObject): void;
}

export function parseEntities(workbook: Workbook, warnings: string[]): EntityContext | undefined {
  const sheet = workbook.sheets.get('entities');
  if (!sheet) {
    const similar = sheetMisspelling('entities', workbook.sheetNames);
    if (similar) warnings.push(similar + SUPPRESS_SPELLING_HINT);
    return undefined;
  }
  throw new XlsFormError('The entities sheet is not supported yet by this converter.', { code: 'unsupported', sheet: 'entities' });
}
