// An uploaded XForm (Briefcase's formUpload) read into what publishing needs: its id, version,
// title, public key and the form JSON (pyxform's `children` tree) the rest of the server reads
// records and exports through. The XForm itself is kept as uploaded. Pure: text in, result out.
import { SaxesParser } from 'saxes';

interface XmlNode {
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
  text: string;
}

export interface ReadXForm {
  ok: true;
  idString: string;
  title: string;
  version: string | undefined;
  publicKey: string | undefined;
  formJson: Record<string, unknown>;
}

export type XFormReading = ReadXForm | { ok: false; message: string };

function parse(xml: string): XmlNode | string {
  const parser = new SaxesParser({ xmlns: false });
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  let problem: string | undefined;
  parser.on('error', (error) => (problem ??= error.message));
  // A DOCTYPE could declare entities: refused, as every XML this server reads.
  parser.on('doctype', () => (problem ??= 'the XForm has a DOCTYPE, which is not allowed.'));
  parser.on('opentag', (tag) => {
    const node: XmlNode = { name: tag.name, attributes: { ...(tag.attributes as Record<string, string>) }, children: [], text: '' };
    stack[stack.length - 1]?.children.push(node);
    root ??= node;
    stack.push(node);
  });
  parser.on('text', (text) => {
    const top = stack[stack.length - 1];
    if (top) top.text += text;
  });
  parser.on('closetag', () => void stack.pop());
  try {
    parser.write(xml).close();
  } catch (error) {
    problem ??= error instanceof Error ? error.message : String(error);
  }
  if (problem !== undefined) return `The XForm is not well-formed XML: ${problem}`;
  return root ?? 'The XForm is empty.';
}

const local = (name: string): string => name.slice(name.indexOf(':') + 1);
const child = (node: XmlNode | undefined, name: string): XmlNode | undefined => node?.children.find((c) => local(c.name) === name);
const children = (node: XmlNode | undefined, name: string): XmlNode[] => node?.children.filter((c) => local(c.name) === name) ?? [];

interface Control {
  tag: string;
  mediatype: string | undefined;
  label: string;
  items: Array<{ name: string; label: string }>;
}

/** Body controls, groups and repeats by the instance path they are bound to. */
function readBody(body: XmlNode | undefined, controls: Map<string, Control>, repeats: Set<string>, parentPath: string): void {
  for (const node of body?.children ?? []) {
    const tag = local(node.name);
    const ref = node.attributes['ref'] ?? node.attributes['nodeset'];
    const path = ref === undefined ? parentPath : ref.startsWith('/') ? ref : `${parentPath}/${ref}`;
    if (tag === 'repeat' && ref !== undefined) repeats.add(path);
    if (tag === 'group' || tag === 'repeat') {
      readBody(node, controls, repeats, path);
      continue;
    }
    if (ref === undefined) continue;
    controls.set(path, {
      tag,
      mediatype: node.attributes['mediatype'],
      label: child(node, 'label')?.text.trim() ?? '',
      items: children(node, 'item').map((item) => ({ name: child(item, 'value')?.text.trim() ?? '', label: child(item, 'label')?.text.trim() ?? '' })),
    });
  }
}

const BIND_TYPES: Readonly<Record<string, string>> = {
  int: 'integer',
  integer: 'integer',
  decimal: 'decimal',
  date: 'date',
  dateTime: 'dateTime',
  time: 'time',
  geopoint: 'geopoint',
  geotrace: 'geotrace',
  geoshape: 'geoshape',
  barcode: 'barcode',
  boolean: 'acknowledge',
};

function mediaType(mediatype: string | undefined): string {
  if (mediatype?.startsWith('image/')) return 'photo';
  if (mediatype?.startsWith('audio/')) return 'audio';
  if (mediatype?.startsWith('video/')) return 'video';
  return 'file';
}

/** A question's type as pyxform's form JSON names it, from its body control and its bind. */
function questionType(control: Control | undefined, bind: Record<string, string> | undefined): string {
  const preload = bind?.['jr:preload'];
  const params = bind?.['jr:preloadParams'];
  if (preload === 'timestamp' && (params === 'start' || params === 'end')) return params;
  if (preload === 'date' && params === 'today') return 'today';
  if (preload === 'property' && params !== undefined) return params;
  if (control?.tag === 'select1') return 'select one';
  if (control?.tag === 'select') return 'select all that apply';
  if (control?.tag === 'upload') return mediaType(control.mediatype);
  if (control?.tag === 'trigger') return 'acknowledge';
  const type = bind?.['type']?.replace(/^xsd:/, '');
  if (type !== undefined && BIND_TYPES[type]) return BIND_TYPES[type];
  if (type === 'binary') return 'file';
  if (!control) return bind?.['calculate'] !== undefined || preload === 'uid' ? 'calculate' : 'hidden';
  return 'text';
}

function elementJson(node: XmlNode, path: string, controls: Map<string, Control>, repeats: Set<string>, binds: Map<string, Record<string, string>>): Record<string, unknown> {
  const name = local(node.name);
  const control = controls.get(path);
  const bind = binds.get(path);
  const label = control?.label ? { label: control.label } : {};
  const bindJson = bind?.['type'] ? { bind: { type: bind['type'].replace(/^xsd:/, '') } } : {};
  const isSection = repeats.has(path) || node.children.length > 0;
  if (isSection) {
    return { type: repeats.has(path) ? 'repeat' : 'group', name, ...label, children: sectionChildren(node, path, controls, repeats, binds) };
  }
  const type = questionType(control, bind);
  const choices = control && control.items.length > 0 ? { children: control.items.map((item) => ({ name: item.name, label: item.label })) } : {};
  return { type, name, ...label, ...bindJson, ...choices };
}

function sectionChildren(node: XmlNode, path: string, controls: Map<string, Control>, repeats: Set<string>, binds: Map<string, Record<string, string>>): Record<string, unknown>[] {
  const seen = new Set<string>();
  const out: Record<string, unknown>[] = [];
  for (const element of node.children) {
    const name = local(element.name);
    // A repeat's template and its default items share a name: one entry each; formhub is the server's own.
    if (seen.has(name) || (path.split('/').length === 2 && name === 'formhub')) continue;
    seen.add(name);
    out.push(elementJson(element, `${path}/${name}`, controls, repeats, binds));
  }
  return out;
}

export function readXForm(xml: string): XFormReading {
  const document = parse(xml);
  if (typeof document === 'string') return { ok: false, message: document };
  const head = child(document, 'head');
  const model = child(head, 'model');
  const primary = children(model, 'instance').find((i) => i.attributes['id'] === undefined);
  const rootNode = primary?.children[0];
  if (local(document.name) !== 'html' || !model || !rootNode) {
    return { ok: false, message: 'This is not an XForm: it needs an h:html root with a model and a primary instance.' };
  }
  const idString = rootNode.attributes['id']?.trim() ?? '';
  if (!/^[\p{L}\p{N}_.-]+$/u.test(idString) || idString.length > 100) {
    return { ok: false, message: 'The XForm’s instance root needs an id attribute (the form id): letters, digits, _, - and . only.' };
  }
  const rootName = local(rootNode.name);
  const binds = new Map<string, Record<string, string>>();
  for (const bind of children(model, 'bind')) if (bind.attributes['nodeset']) binds.set(bind.attributes['nodeset'], bind.attributes);
  const controls = new Map<string, Control>();
  const repeats = new Set<string>();
  readBody(child(document, 'body'), controls, repeats, `/${rootName}`);
  const version = rootNode.attributes['version']?.trim() || undefined;
  const publicKey = child(model, 'submission')?.attributes['base64RsaPublicKey']?.trim() || undefined;
  const title = child(head, 'title')?.text.trim() || idString;
  const formJson: Record<string, unknown> = {
    name: rootName,
    title,
    id_string: idString,
    sms_keyword: idString,
    default_language: 'default',
    type: 'survey',
    ...(version !== undefined ? { version } : {}),
    ...(publicKey !== undefined ? { public_key: publicKey } : {}),
    children: sectionChildren(rootNode, `/${rootName}`, controls, repeats, binds),
  };
  return { ok: true, idString, title, version, publicKey, formJson };
}
