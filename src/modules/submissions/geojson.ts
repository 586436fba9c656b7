// GET /api/v1/data/{pk}.geojson: a page of records as a GeoJSON FeatureCollection, one Feature per
// record with the points of its geopoint answers (onadata's GeoJsonSerializer).
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { findFormDefinition } from '../forms/repository.ts';
import { buildFormModel } from '../../lib/form-model/model.ts';
import type { PagePlace } from '../../lib/pages.ts';
import { listRecords, wholeText, type DataQuery } from './data.ts';
import { requireForm } from '../../access/load.ts';
import { ownValue } from '../../platform/lookup.ts';

type Point = { type: 'Point'; coordinates: [number, number] };

/** "lat lon [alt acc]" → a GeoJSON point (lon, lat), or undefined for anything else. */
function pointOf(value: unknown): Point | undefined {
  if (typeof value !== 'string') return undefined;
  const [lat, lon] = value.trim().split(/\s+/).map(Number);
  if (lat === undefined || lon === undefined || !Number.isFinite(lat) || !Number.isFinite(lon)) return undefined;
  return { type: 'Point', coordinates: [lon, lat] };
}

/** The values of `path` in a record, looking inside repeats (arrays of objects keyed by full paths). */
function valuesAt(record: Record<string, unknown>, path: string): unknown[] {
  const found: unknown[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (key === path) found.push(value);
    else if (Array.isArray(value) && path.startsWith(`${key}/`)) {
      for (const item of value) if (typeof item === 'object' && item !== null) found.push(...valuesAt(item as Record<string, unknown>, path));
    }
  }
  return found;
}

export interface GeoJsonQuery extends DataQuery {
  geo_field?: string | undefined;
  fields?: string | undefined;
  title?: string | undefined;
  /** `true`: a record with one point is a Point, not a GeometryCollection of one (onadata's simple_style). */
  simple_style?: string | undefined;
}

export async function recordsGeoJson(ctx: RequestContext, rawId: string, query: GeoJsonQuery): Promise<{ body: string; place: PagePlace | undefined }> {
  const { form } = await requireForm(ctx, rawId, 'view_xform');
  const model = buildFormModel((await findFormDefinition(ctx.db, form.id)).json);
  const paths = query.geo_field ? [query.geo_field] : model.geopointPaths;
  if (paths.length === 0) throw errors.notFound();
  const extra = (query.fields ?? '').split(',').map((f) => f.trim()).filter(Boolean);
  const page = await listRecords(ctx, rawId, { ...query, fields: undefined, page: query.page ?? '1', page_size: query.page_size ?? '1000' });
  const records = JSON.parse(await wholeText(page.chunks)) as Array<Record<string, unknown>>;
  const simple = query.simple_style?.toLowerCase() === 'true';
  const features = records.map((record) => {
    const points = paths.flatMap((path) => valuesAt(record, path).map(pointOf)).filter((p): p is Point => p !== undefined);
    const properties: Record<string, unknown> = { id: record['_id'], xform: form.id };
    for (const field of extra) properties[field] = ownValue(record, field) ?? null;
    if (query.title) properties['title'] = ownValue(record, query.title) ?? null;
    const geometry = points.length === 0 ? null : simple && points.length === 1 ? points[0] : { type: 'GeometryCollection', geometries: points };
    return { type: 'Feature', geometry, properties };
  });
  return { body: JSON.stringify({ type: 'FeatureCollection', features }), place: page.place };
}
