// The data pages' calls: a form's JSON (its questions and labels), pages of its records, one
// record with its history, reviews and tags, deletion, the map's GeoJSON and the summary's counts.
import { call } from '../api.ts';

/** A label: plain text, or text per language (`{"English (en)": "Name", …}`). */
export type Label = string | Readonly<Record<string, string>>;

/** A question, group or repeat of the form JSON (pyxform's `children` tree). */
export interface FormElement {
  readonly type: string;
  readonly name: string;
  readonly label?: Label;
  readonly children?: readonly FormElement[];
  readonly bind?: Readonly<Record<string, unknown>>;
}

export interface FormJson {
  readonly name: string;
  readonly title: string;
  readonly id_string: string;
  readonly default_language?: string;
  readonly children: readonly FormElement[];
}

export interface Attachment {
  readonly id: number;
  readonly filename: string;
  readonly name: string;
  readonly mimetype: string;
  readonly download_url: string;
}

/** A record as the data API answers it: answers by slash path, and onadata's `_` meta keys. */
export type DataRecord = Readonly<Record<string, unknown>> & {
  readonly _id: number;
  readonly _submission_time?: string;
  readonly _submitted_by?: string | null;
  readonly _review_status?: string;
  readonly _review_comment?: string;
  readonly _tags?: readonly string[];
  readonly _attachments?: readonly Attachment[];
  readonly _geolocation?: readonly (number | null)[];
};

export interface FormInfo {
  readonly formid: number;
  readonly title: string;
  readonly id_string: string;
  readonly num_of_submissions: number;
  readonly project: string;
}

export interface Review {
  readonly id: number;
  readonly instance: number;
  readonly status: string;
  readonly note: string | null;
  readonly date_created: string;
  readonly created_by: number | null;
}

export interface RecordsQuery {
  /** onadata's JSON query, or plain text searched in the whole record. */
  query?: string;
  sort?: Readonly<Record<string, 1 | -1>>;
  start: number;
  limit: number;
  fields?: readonly string[];
}

export interface GeoFeature {
  readonly type: 'Feature';
  readonly geometry: GeoGeometry | null;
  readonly properties: Readonly<Record<string, unknown>> & { readonly id: number };
}

export type GeoGeometry =
  | { readonly type: 'Point'; readonly coordinates: readonly [number, number] }
  | { readonly type: 'GeometryCollection'; readonly geometries: readonly GeoGeometry[] }
  | { readonly type: 'LineString' | 'Polygon'; readonly coordinates: unknown };

export interface GeoCollection {
  readonly type: 'FeatureCollection';
  readonly features: readonly GeoFeature[];
}

export interface StatsRow {
  readonly count: number;
  readonly [key: string]: string | number | null;
}

function recordsPath(formId: number, q: RecordsQuery): string {
  const params = new URLSearchParams({ start: String(q.start), limit: String(q.limit) });
  if (q.query) params.set('query', q.query);
  if (q.sort && Object.keys(q.sort).length) params.set('sort', JSON.stringify(q.sort));
  if (q.fields) params.set('fields', JSON.stringify(q.fields));
  return `/data/${formId}?${params.toString()}`;
}

export const dataApi = {
  form: (formId: number) => call<FormInfo>('GET', `/forms/${formId}`),
  formJson: (formId: number) => call<FormJson>('GET', `/forms/${formId}/form.json`),
  records: (formId: number, q: RecordsQuery) => call<DataRecord[]>('GET', recordsPath(formId, q)),
  record: (formId: number, dataId: number) => call<DataRecord>('GET', `/data/${formId}/${dataId}`),
  history: (formId: number, dataId: number) => call<DataRecord[]>('GET', `/data/${formId}/${dataId}/history`),
  deleteRecord: (formId: number, dataId: number) => call<void>('DELETE', `/data/${formId}/${dataId}`),
  deleteRecords: (formId: number, ids: readonly number[]) => call<{ message: string }>('DELETE', `/data/${formId}`, { instance_ids: ids.join(',') }),
  reviews: (dataId: number) => call<Review[]>('GET', `/submissionreview?instance=${dataId}`),
  review: (dataId: number, status: string, note: string) => call<Review>('POST', '/submissionreview', { instance: dataId, status, note }),
  addTags: (formId: number, dataId: number, tags: string) => call<string[]>('POST', `/data/${formId}/${dataId}/labels`, { tags }),
  removeTag: (formId: number, dataId: number, tag: string) => call<string[]>('DELETE', `/data/${formId}/${dataId}/labels/${encodeURIComponent(tag)}`),
  editLink: (formId: number, dataId: number, returnUrl: string) =>
    call<{ url: string }>('GET', `/data/${formId}/${dataId}/enketo?return_url=${encodeURIComponent(returnUrl)}`),
  geojson: (formId: number, page: number, pageSize: number) => call<GeoCollection>('GET', `/data/${formId}.geojson?page=${page}&page_size=${pageSize}`),
  stats: (formId: number, group: string) => call<StatsRow[]>('GET', `/stats/submissions/${formId}?group=${encodeURIComponent(group)}&name=value`),
  mapTileUrl: async () => (await call<{ map_tile_url?: string }>('GET', '/session')).map_tile_url ?? '',
};

/** The address of an attachment on this server (the API's download_url may name BASE_URL's host). */
export function attachmentUrl(attachment: Attachment): string {
  return `/api/v1/files/${attachment.id}?filename=${encodeURIComponent(attachment.filename)}`;
}

export const REVIEW_STATUSES: Readonly<Record<string, string>> = { '1': 'Approved', '2': 'Rejected', '3': 'Pending' };
