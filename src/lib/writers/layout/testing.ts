// Test helpers: forms from the fixtures, converted by our XLSForm converter.
import { readFileSync } from 'node:fs';
import { convert } from '../../../../packages/xlsform/src/index.ts';
import { buildFormModel, type FormModel } from '../../form-model/model.ts';

export function formJsonFrom(fixture: string): Record<string, unknown> {
  const url = new URL(`../../../../test/fixtures/${fixture}`, import.meta.url);
  const result = convert(readFileSync(url), { fileName: fixture.split('/').pop() ?? fixture });
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('; '));
  return result.formJson;
}

export function exportFormFrom(fixture: string): FormModel {
  return buildFormModel(formJsonFrom(fixture));
}
