// KML 2.2 for survey records: one Placemark per record with a point, named after the record,
// whose description is an HTML table of the record's labelled answers (and its first photo).
// Pure: placemarks in, UTF-8 chunks out, about 64 KiB at a time.

export interface KmlPlacemark {
  /** The record's id, shown in the placemark's name. */
  id: number | string;
  latitude: number;
  longitude: number;
  /** Label and display value of each answer, in form order. */
  rows: ReadonlyArray<readonly [label: string, value: string]>;
  /** Shown above the table as a thumbnail. */
  imageUrl?: string | undefined;
}

const CHUNK_CHARS = 64 * 1024;
const encoder = new TextEncoder();
// Characters XML 1.0 does not allow, even escaped.
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Text for an XML element or a quoted attribute, and for HTML inside it. */
export function escapeXml(text: string): string {
  return text
    .replace(FORBIDDEN, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

export function kmlHead(documentName: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<kml xmlns="http://www.opengis.net/kml/2.2">\n<Document>\n' +
    `<name>${escapeXml(documentName)}</name>\n` +
    '<Style id="record"><IconStyle><scale>1.3</scale><Icon><href>http://maps.google.com/mapfiles/kml/paddle/red-circle.png</href></Icon>' +
    '<hotSpot x="32" y="1" xunits="pixels" yunits="pixels"/></IconStyle></Style>\n'
  );
}

export const KML_TAIL = '</Document>\n</kml>\n';

/** The description's HTML: escaped once as HTML, and once more as the text of the KML element. */
function descriptionHtml(placemark: KmlPlacemark): string {
  let html = '<table border="1">';
  if (placemark.imageUrl) html += `<tr><td colspan="2"><img width="210" src="${escapeXml(placemark.imageUrl)}" alt=""/></td></tr>`;
  for (const [label, value] of placemark.rows) html += `<tr><td>${escapeXml(label)}</td><td>${escapeXml(value)}</td></tr>`;
  return html + '</table>';
}

export function kmlPlacemark(placemark: KmlPlacemark): string {
  return (
    `<Placemark><name>Survey Instance: ${escapeXml(String(placemark.id))}</name>` +
    `<description>${escapeXml(descriptionHtml(placemark))}</description><styleUrl>#record</styleUrl>` +
    `<Point><coordinates>${placemark.longitude},${placemark.latitude}</coordinates></Point></Placemark>\n`
  );
}

/** The whole document, streamed: placemarks are pulled as chunks are consumed. */
export async function* kmlChunks(documentName: string, placemarks: AsyncIterable<KmlPlacemark> | Iterable<KmlPlacemark>): AsyncIterable<Uint8Array> {
  let buffer = kmlHead(documentName);
  for await (const placemark of placemarks) {
    buffer += kmlPlacemark(placemark);
    if (buffer.length >= CHUNK_CHARS) {
      yield encoder.encode(buffer);
      buffer = '';
    }
  }
  yield encoder.encode(buffer + KML_TAIL);
}
