// Linked datasets: a media entry `xform <pk> <name>` on one form makes another form's records a CSV
// file its devices download with it (for pulldata and select_one_from_file: follow-up visits,
// registers). The entry's creator had to manage the linked form; from then on whoever may download
// the linking form gets the linked form's CSV, as in onadata.
import { createHash } from 'node:crypto';
import type { AppDeps } from '../../context.ts';
import { findFormDefinition, findLiveForm } from '../forms/repository.ts';
import type { RawQuery } from './options.ts';
import { formDataVersion } from './stored-exports-repository.ts';
import { exportOptionsFor, renderExport, type ExportFile } from './render.ts';

/**
 * The options a device's download asks for (the manifest's address carries them): group paths
 * joined by `.` and repeat columns as `rep_1_.q`, since `/` and `[` cannot appear in the names
 * pulldata and choice filters refer to.
 */
export const LINKED_DATASET_QUERY = 'group_delimiter=.&repeat_index_tags=_,_';

/** `xform 12 households` → the form id and file name; undefined for anything else. */
export function parseLinkedDataset(value: string): { formId: number; fileName: string } | undefined {
  const parts = value.trim().split(/\s+/);
  if (parts.length !== 3 || parts[0] !== 'xform' || !/^\d{1,9}$/.test(parts[1] ?? '')) return undefined;
  const name = parts[2] ?? '';
  return { formId: Number(parts[1]), fileName: name.toLowerCase().endsWith('.csv') ? name : `${name}.csv` };
}

/**
 * The manifest hash of a linked dataset: it changes whenever its records do (a new, edited or
 * deleted record, a replaced form), so devices fetch it again then and only then.
 */
export async function linkedDatasetHash(deps: AppDeps, formId: number): Promise<string> {
  return `md5:${createHash('md5').update(await formDataVersion(deps.db, formId)).digest('hex')}`;
}

/** The linked form's records as CSV, or undefined when the form is gone. */
export async function linkedDatasetCsv(deps: AppDeps, formId: number, query: RawQuery, baseUrl: string): Promise<ExportFile | undefined> {
  const form = await findLiveForm(deps.db, formId);
  if (!form) return undefined;
  const definition = await findFormDefinition(deps.db, form.id);
  const target = { formId: form.id, idString: form.id_string, title: form.title, formJson: definition.json, submittedBy: undefined };
  return renderExport(deps, target, 'csv', await exportOptionsFor(deps, target, query), baseUrl);
}
