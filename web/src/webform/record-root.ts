// A record's root element renamed to the one the form's primary instance has, before the form
// engine loads it to edit. The server files a record under its form by the root's `id` attribute,
// not by the root's name, so a record can carry another name: sent while an earlier version of the
// form had another `name` setting, or by a client that names the root after the form id. ODK Web
// Forms finds the answers by path from the form's root and refuses any other ("No definition for
// nodeset"); renamed, the record opens, and the edit is sent under the form's current root.

const XFORMS = 'http://www.w3.org/2002/xforms';

/** The name of the root element of the form's primary instance (the model's first <instance>). */
export function primaryInstanceRoot(formXml: string): string | undefined {
  const form = new DOMParser().parseFromString(formXml, 'application/xml');
  const instance = form.getElementsByTagNameNS(XFORMS, 'instance')[0] ?? form.getElementsByTagName('instance')[0];
  return instance?.firstElementChild?.localName;
}

/** The record's XML with its root element named `root`, attributes and content unchanged. */
export function recordRootedAs(recordXml: string, root: string): string {
  const record = new DOMParser().parseFromString(recordXml, 'application/xml');
  const old = record.documentElement;
  if (!old || old.localName === root || record.getElementsByTagName('parsererror').length > 0) return recordXml;
  const renamed = record.createElementNS(old.namespaceURI, old.prefix ? `${old.prefix}:${root}` : root);
  for (const attribute of Array.from(old.attributes)) renamed.setAttributeNodeNS(attribute.cloneNode() as Attr);
  while (old.firstChild) renamed.appendChild(old.firstChild);
  record.replaceChild(renamed, old);
  return new XMLSerializer().serializeToString(record);
}
