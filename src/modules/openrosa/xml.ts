// OpenRosa documents: the form list and the manifest.
import { createHash } from 'node:crypto';

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export interface FormListEntry {
  idString: string;
  title: string;
  version: string;
  hash: string;
  description: string;
  downloadUrl: string;
  manifestUrl?: string;
}

export function formListXml(entries: readonly FormListEntry[]): string {
  const items = entries.map(
    (e) =>
      `<xform><formID>${escape(e.idString)}</formID><name>${escape(e.title)}</name>` +
      (e.version ? `<version>${escape(e.version)}</version>` : '<version/>') +
      `<hash>${escape(e.hash)}</hash><descriptionText>${escape(e.description)}</descriptionText>` +
      `<downloadUrl>${escape(e.downloadUrl)}</downloadUrl>` +
      (e.manifestUrl ? `<manifestUrl>${escape(e.manifestUrl)}</manifestUrl>` : '') +
      '</xform>',
  );
  return `<?xml version="1.0" encoding="utf-8"?>\n<xforms xmlns="http://openrosa.org/xforms/xformsList">${items.join('')}</xforms>`;
}

export interface ManifestEntry {
  filename: string;
  /** `md5:<hex>` of the file. */
  hash: string;
  downloadUrl: string;
}

export function mediaHash(content: string | Uint8Array): string {
  return `md5:${createHash('md5').update(content).digest('hex')}`;
}

export function manifestXml(media: readonly ManifestEntry[]): string {
  const files = media.map(
    (m) => `<mediaFile><filename>${escape(m.filename)}</filename><hash>${escape(m.hash)}</hash><downloadUrl>${escape(m.downloadUrl)}</downloadUrl></mediaFile>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?>\n<manifest xmlns="http://openrosa.org/xforms/xformsManifest">${files.join('')}</manifest>`;
}
