// What onadata adds to every published XForm: a `formhub/uuid` node (with its bind) in the primary
// instance, and a `version` attribute on the instance root when the XLSForm gave none.

const PRIMARY_INSTANCE_ROOT = /<instance>\s*<([A-Za-z_][\w.:-]*)([^>]*?)(\/?)>/;

export function escapeXmlAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function escapeXmlText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Adds or replaces the formhub uuid and makes sure the root carries `version`. */
export function stampXForm(xml: string, uuid: string, version: string): string {
  const match = PRIMARY_INSTANCE_ROOT.exec(xml);
  if (!match || match[1] === undefined) return xml;
  const [, root, attributes = '', selfClosing] = match;
  const withVersion = /\sversion="/.test(attributes) ? attributes : `${attributes} version="${escapeXmlAttribute(version)}"`;
  const formhub = `<formhub><uuid>${uuid}</uuid></formhub>`;
  const replacement = selfClosing
    ? `<instance><${root}${withVersion}>${formhub}</${root}>`
    : `<instance><${root}${withVersion}>${formhub}`;
  let stamped = xml.replace(/<formhub><uuid>[^<]*<\/uuid><\/formhub>/, '');
  stamped = stamped.replace(PRIMARY_INSTANCE_ROOT, replacement);
  stamped = stamped.replace(/<bind nodeset="\/[^"]*\/formhub\/uuid"[^>]*\/>/, '');
  const bind = `<bind nodeset="/${root}/formhub/uuid" type="string" calculate="'${uuid}'"/>`;
  return stamped.replace(/<\/model>/, `${bind}</model>`);
}

/** Replaces the form title in `<h:title>`. */
export function retitleXForm(xml: string, title: string): string {
  return xml.replace(/<h:title>[\s\S]*?<\/h:title>/, `<h:title>${escapeXmlText(title)}</h:title>`);
}
