// OSM answers (onadata-data.md §3.7): the `.osm` file an osm question names is read when it
// arrives, with its record or late, and what it holds is kept in osm_data and shown in the
// record as `<field>:<type>:id` and `<field>:<tag>` keys, which the data API, the filters and
// every tabular export then carry. Files are read before the record's transaction (readOsmAnswers)
// and stored inside it with the attachment (storeOsmAnswers).
import { readFile } from 'node:fs/promises';
import type { DbOrTx } from '../../platform/db.ts';
import type { BlobContent } from '../blobs/repository.ts';
import { OSM_PARSE_LIMIT, osmRecordKeys, parseOsmAnswer, type OsmFeature } from './parse.ts';
import * as repo from './repository.ts';

export interface OsmAnswerFile {
  /** The attachment's name as sent. */
  readonly attachmentName: string;
  /** The osm question's path, and the file name its answer gives. */
  readonly fieldName: string;
  readonly filename: string;
  readonly feature: OsmFeature;
}

interface MediaFile {
  readonly name: string;
  readonly size: number;
  readonly content: BlobContent;
}

export function isOsmFile(name: string): boolean {
  return name.toLowerCase().endsWith('.osm');
}

async function osmText(file: MediaFile): Promise<string | undefined> {
  if (file.size > OSM_PARSE_LIMIT) return undefined;
  const bytes = file.content instanceof Uint8Array ? file.content : await readFile(file.content.path);
  if (bytes.byteLength > OSM_PARSE_LIMIT) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The features of the record's `.osm` files, each with the question whose answer names it (as
 * onadata matches them: the file name starts with the answer without its `.osm`). Files no
 * question names, files over OSM_PARSE_LIMIT and files that are not OSM XML give nothing.
 */
export async function readOsmAnswers(osmPaths: readonly string[], record: Readonly<Record<string, unknown>>, media: readonly MediaFile[]): Promise<OsmAnswerFile[]> {
  const answers: Array<[string, string]> = [];
  for (const path of osmPaths) {
    const value = record[path];
    if (typeof value === 'string' && value !== '') answers.push([path, value]);
  }
  const found: OsmAnswerFile[] = [];
  if (answers.length === 0) return found;
  for (const file of media) {
    if (!isOsmFile(file.name)) continue;
    const answer = answers.find(([, value]) => file.name.startsWith(value.replace('.osm', '')));
    if (!answer) continue;
    const text = await osmText(file);
    const feature = text === undefined ? undefined : parseOsmAnswer(text);
    if (feature) found.push({ attachmentName: file.name, fieldName: answer[0], filename: answer[1], feature });
  }
  return found;
}

/**
 * Inside the record's transaction, after its files are written: keeps what the stored files held
 * (`stored`: names of the files actually written), sets the form's instances_with_osm when an
 * `.osm` file was stored, and writes the record's osm keys from all its osm_data rows (an edit's
 * new JSON gets them back too: `refresh`).
 */
export async function storeOsmAnswers(
  db: DbOrTx,
  target: { formId: number; instanceId: number; osmPaths: readonly string[]; now: Date },
  answers: readonly OsmAnswerFile[],
  stored: readonly string[],
  refresh: boolean,
): Promise<void> {
  if (stored.some(isOsmFile)) await repo.markFormWithOsm(db, target.formId);
  const written = answers.filter((a) => stored.includes(a.attachmentName));
  for (const answer of written) {
    const { feature } = answer;
    await repo.upsertOsmData(
      db,
      {
        instance_id: target.instanceId,
        field_name: answer.fieldName,
        filename: answer.filename,
        osm_id: feature.osmId,
        osm_type: feature.osmType,
        tags: JSON.stringify(feature.tags),
        geom: feature.geometry ? JSON.stringify({ type: 'GeometryCollection', geometries: [feature.geometry] }) : null,
      },
      target.now,
    );
  }
  if (written.length === 0 && !refresh) return;
  if (target.osmPaths.length === 0) return;
  const keys: Record<string, unknown> = {};
  for (const row of await repo.listOsmDataOfInstance(db, target.instanceId)) {
    Object.assign(keys, osmRecordKeys(row.field_name, row.osm_type, row.osm_id, row.tags));
  }
  await repo.setRecordOsmKeys(db, target.instanceId, target.osmPaths, keys);
}
