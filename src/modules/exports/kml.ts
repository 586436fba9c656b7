// KML export (onadata-data.md §3.6): a Placemark for each record with a geopoint, at the
// record's first point (`_geolocation`), described by its labelled answers and first photo.
import type { FormModel, FormNode, FormQuestion, FormSection } from '../../lib/form-model/model.ts';
import { labelText, sectionQuestions } from '../../lib/form-model/model.ts';
import type { ExportRecord } from '../../lib/writers/layout/types.ts';
import { mediaValue } from '../../lib/writers/layout/values.ts';
import { kmlChunks, type KmlPlacemark } from '../../lib/writers/kml/writer.ts';
import type { ExportSource } from './source.ts';

const IMAGE_TYPE = /image|photo|picture/i;

function display(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

interface Labeller {
  form: FormModel;
  language: string | undefined;
}

function labelOf(labeller: Labeller, question: FormQuestion): string {
  return labelText(question.label, labeller.language, labeller.form.defaultLanguage) ?? question.name;
}

/** Label/value pairs in form order; repeat items' answers carry their position, e.g. `Name [2]`. */
function answerRows(labeller: Labeller, children: readonly FormNode[], record: ExportRecord, suffix: string, out: Array<[string, string]>): void {
  for (const question of sectionQuestions(children)) {
    const value = record[question.path];
    if (value === undefined || value === null || value === '') continue;
    out.push([`${labelOf(labeller, question)}${suffix}`, display(value)]);
  }
  for (const repeat of repeatsOf(children)) {
    const items = record[repeat.path];
    if (!Array.isArray(items)) continue;
    items.forEach((item: unknown, index) => {
      if (typeof item === 'object' && item !== null) answerRows(labeller, repeat.children, item as ExportRecord, `${suffix} [${index + 1}]`, out);
    });
  }
}

/** The repeats directly inside these nodes (through groups, not through other repeats). */
function repeatsOf(children: readonly FormNode[]): FormSection[] {
  const out: FormSection[] = [];
  for (const node of children) {
    if (node.kind === 'repeat') out.push(node);
    else if (node.kind === 'group') out.push(...repeatsOf(node.children));
  }
  return out;
}

function firstImageUrl(source: ExportSource, record: ExportRecord): string | undefined {
  for (const question of sectionQuestions(source.form.root.children)) {
    const value = record[question.path];
    if (question.uses.media && IMAGE_TYPE.test(question.type) && typeof value === 'string' && value !== '') {
      return mediaValue(value, record, { baseUrl: source.baseUrl });
    }
  }
  return undefined;
}

function placemarkOf(source: ExportSource, labeller: Labeller, record: ExportRecord): KmlPlacemark | undefined {
  const point = record['_geolocation'];
  if (!Array.isArray(point)) return undefined;
  const [latitude, longitude] = point as unknown[];
  if (typeof latitude !== 'number' || typeof longitude !== 'number') return undefined;
  const rows: Array<[string, string]> = [];
  answerRows(labeller, source.form.root.children, record, '', rows);
  return { id: display(record['_id']), latitude, longitude, rows, imageUrl: firstImageUrl(source, record) };
}

export function kmlExport(source: ExportSource): AsyncIterable<Uint8Array> {
  const labeller: Labeller = { form: source.form, language: source.options.language };
  async function* placemarks(): AsyncIterable<KmlPlacemark> {
    for await (const record of source.records()) {
      const placemark = placemarkOf(source, labeller, record);
      if (placemark) yield placemark;
    }
  }
  return kmlChunks(source.form.title, placemarks());
}
