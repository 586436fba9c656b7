// Reads the feature an OpenMapKit `.osm` answer describes, as onadata's save_osm_data keeps it:
// the file's first way (or its first node when it has no way), its tags without empty or FIXME
// values, `<type>:id`, and the centroid of its geometry as `ctr:lat` / `ctr:lon`. Pure.
//
// The file comes from a device and is untrusted: saxes expands no entities and any DOCTYPE is
// refused; a file that is not well-formed OSM XML, or is larger than OSM_PARSE_LIMIT, gives
// nothing (it is still stored as the record's attachment).
import { SaxesParser } from 'saxes';

/** Larger `.osm` answers are stored but not read (OpenMapKit's files are a few kilobytes). */
export const OSM_PARSE_LIMIT = 2 * 1024 * 1024;

export type OsmGeometry =
  | { readonly type: 'Polygon'; readonly coordinates: number[][][] }
  | { readonly type: 'LineString'; readonly coordinates: number[][] }
  | { readonly type: 'Point'; readonly coordinates: number[] };

export interface OsmFeature {
  readonly osmId: string;
  readonly osmType: 'way' | 'node';
  /** `<type>:id`, the feature's tags, then `ctr:lon` and `ctr:lat` when it has a geometry. */
  readonly tags: Readonly<Record<string, string | number>>;
  readonly geometry: OsmGeometry | undefined;
}

class Refused extends Error {}

interface Element {
  readonly id: string;
  readonly tags: Array<[string, string]>;
}
interface NodeElement extends Element {
  readonly point: [number, number] | undefined;
}
interface WayElement extends Element {
  readonly refs: string[];
}

function coordinate(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

interface OsmElements {
  readonly nodes: Map<string, NodeElement>;
  readonly nodeOrder: NodeElement[];
  readonly ways: WayElement[];
}

function readElements(xml: string): OsmElements | undefined {
  const parser = new SaxesParser<{ xmlns: false; position: false }>({ xmlns: false, position: false });
  const found: OsmElements = { nodes: new Map(), nodeOrder: [], ways: [] };
  let depth = 0;
  let current: NodeElement | WayElement | undefined;
  parser.on('doctype', () => {
    throw new Refused('DOCTYPE');
  });
  parser.on('error', (error) => {
    throw new Refused(error.message);
  });
  parser.on('opentag', (tag) => {
    depth += 1;
    const attr = tag.attributes;
    if (depth === 1) {
      if (tag.name !== 'osm') throw new Refused('root is not osm');
    } else if (depth === 2) {
      current = undefined;
      const id = attr['id'] ?? '';
      if (tag.name === 'node') {
        const lon = coordinate(attr['lon']);
        const lat = coordinate(attr['lat']);
        const node: NodeElement = { id, tags: [], point: lon !== undefined && lat !== undefined ? [lon, lat] : undefined };
        if (!found.nodes.has(id)) found.nodes.set(id, node);
        found.nodeOrder.push(node);
        current = node;
      } else if (tag.name === 'way') {
        const way: WayElement = { id, tags: [], refs: [] };
        found.ways.push(way);
        current = way;
      }
    } else if (depth === 3 && current) {
      if (tag.name === 'tag' && attr['k'] !== undefined) current.tags.push([attr['k'], attr['v'] ?? '']);
      else if (tag.name === 'nd' && 'refs' in current && attr['ref'] !== undefined) current.refs.push(attr['ref']);
    }
  });
  parser.on('closetag', () => {
    depth -= 1;
  });
  try {
    parser.write(xml.replace(/^\uFEFF/, '')).close();
  } catch (error) {
    if (error instanceof Refused) return undefined;
    throw error;
  }
  return found;
}

/** Centroid as GEOS computes it: area-weighted for a polygon, length-weighted for a line. */
export function centroid(geometry: OsmGeometry): [number, number] | undefined {
  if (geometry.type === 'Point') return [geometry.coordinates[0] ?? 0, geometry.coordinates[1] ?? 0];
  const points = geometry.type === 'Polygon' ? (geometry.coordinates[0] ?? []) : geometry.coordinates;
  if (geometry.type === 'Polygon') {
    const base = points[0];
    if (!base) return undefined;
    let cx = 0;
    let cy = 0;
    let area2 = 0;
    for (let i = 0; i + 1 < points.length; i += 1) {
      const p1 = points[i] ?? base;
      const p2 = points[i + 1] ?? base;
      const [x0 = 0, y0 = 0] = base;
      const [x1 = 0, y1 = 0] = p1;
      const [x2 = 0, y2 = 0] = p2;
      const a = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
      cx += a * (x0 + x1 + x2);
      cy += a * (y0 + y1 + y2);
      area2 += a;
    }
    if (area2 !== 0) return [cx / 3 / area2, cy / 3 / area2];
  }
  let length = 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i + 1 < points.length; i += 1) {
    const [x0 = 0, y0 = 0] = points[i] ?? [];
    const [x1 = 0, y1 = 0] = points[i + 1] ?? [];
    const segment = Math.hypot(x1 - x0, y1 - y0);
    if (segment === 0) continue;
    length += segment;
    sx += (segment * (x0 + x1)) / 2;
    sy += (segment * (y0 + y1)) / 2;
  }
  if (length > 0) return [sx / length, sy / length];
  const first = points[0];
  return first ? [first[0] ?? 0, first[1] ?? 0] : undefined;
}

function wayGeometry(way: WayElement, nodes: ReadonlyMap<string, NodeElement>): OsmGeometry | undefined {
  const points: number[][] = [];
  for (const ref of way.refs) {
    const point = nodes.get(ref)?.point;
    if (point) points.push([...point]);
  }
  const first = points[0];
  const last = points[points.length - 1];
  // A closed ring of at least four points is an area (GEOS builds a Polygon), anything else a line.
  if (points.length >= 4 && first && last && first[0] === last[0] && first[1] === last[1]) return { type: 'Polygon', coordinates: [points] };
  return points.length >= 2 ? { type: 'LineString', coordinates: points } : undefined;
}

function featureOf(osmType: 'way' | 'node', element: Element, geometry: OsmGeometry | undefined): OsmFeature {
  const tags: Record<string, string | number> = { [`${osmType}:id`]: element.id };
  for (const [key, value] of element.tags) {
    if (value === '' || value.toUpperCase() === 'FIXME') continue;
    tags[key] = value;
  }
  const centre = geometry ? centroid(geometry) : undefined;
  if (centre) {
    tags['ctr:lon'] = centre[0];
    tags['ctr:lat'] = centre[1];
  }
  return { osmId: element.id, osmType, tags, geometry };
}

/**
 * The feature an OSM answer describes, or undefined when the file is refused, not OSM XML, or
 * holds neither way nor node. A duplicated `action="modify"` (which some OpenMapKit versions
 * write) is dropped and the file read again, as onadata does.
 */
export function parseOsmAnswer(xml: string): OsmFeature | undefined {
  let elements = readElements(xml);
  if (!elements && xml.includes('action="modify" ')) elements = readElements(xml.replaceAll('action="modify" ', ''));
  if (!elements) return undefined;
  const way = elements.ways[0];
  if (way) return featureOf('way', way, wayGeometry(way, elements.nodes));
  const node = elements.nodeOrder[0];
  if (!node) return undefined;
  return featureOf('node', node, node.point ? { type: 'Point', coordinates: [...node.point] } : undefined);
}

/** The record keys an answer's feature gives: `<field>:<type>:id` and `<field>:<tag>`. */
export function osmRecordKeys(fieldName: string, osmType: string, osmId: string, tags: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const keys: Record<string, unknown> = { [`${fieldName}:${osmType}:id`]: osmId };
  for (const [key, value] of Object.entries(tags)) keys[`${fieldName}:${key}`] = value;
  return keys;
}
