// Survey tree -> the XForm document.
import { isObject, text } from '../parse/json-helpers.ts';
import type { JsonObject } from '../types.ts';
import type { SurveyTree } from '../survey/tree.ts';
import { BodyWriter } from './body.ts';
import { secondaryInstances, primaryInstance } from './instances.ts';
import { collectTranslations, writeItext, type Translations } from './itext.ts';
import { XmlOut } from './out.ts';
import { References } from './references.ts';
import { el, openTagLine, setAttr, writeElement, type XmlElement } from './xml.ts';

const NAMESPACES: ReadonlyArray<[string, string]> = [
  ['xmlns', 'http://www.w3.org/2002/xforms'],
  ['xmlns:h', 'http://www.w3.org/1999/xhtml'],
  ['xmlns:ev', 'http://www.w3.org/2001/xml-events'],
  ['xmlns:xsd', 'http://www.w3.org/2001/XMLSchema'],
  ['xmlns:jr', 'http://openrosa.org/javarosa'],
  ['xmlns:orx', 'http://openrosa.org/xforms'],
  ['xmlns:odk', 'http://www.opendatakit.org/xforms'],
];

function namespaceAttrs(survey: JsonObject, entityVersion: string | undefined): Array<[string, string]> {
  const attrs: Array<[string, string]> = NAMESPACES.map(([k, v]) => [k, v]);
  let extra = text(survey['namespaces']);
  if (entityVersion) extra = `${extra ?? ''} entities=http://www.opendatakit.org/xforms/entities`.trim();
  if (!extra) return attrs;
  for (const declaration of extra.split(/\s+/)) {
    const parts = declaration.split('=');
    if (parts.length !== 2 || parts[0] === '') continue;
    const key = `xmlns:${parts[0] ?? ''}`;
    if (attrs.some(([k]) => k === key)) continue;
    attrs.push([key, (parts[1] ?? '').replaceAll('"', '').replaceAll("'", '')]);
  }
  return attrs;
}

export interface XFormResult {
  xml: string;
  translations: Translations;
}

export function writeXForm(tree: SurveyTree, survey: JsonObject): XFormResult {
  const refs = new References(tree);
  const defaultLanguage = text(survey['default_language']) ?? 'default';
  const entityVersion = text(survey['entity_version']);
  const translations = collectTranslations(tree, defaultLanguage);
  const body = new BodyWriter(tree, refs);
  const out = new XmlOut();
  const html: XmlElement = { tag: 'h:html', attrs: namespaceAttrs(survey, entityVersion), children: [] };
  out.add('<?xml version="1.0"?>\n');
  out.add(openTagLine('', html));
  out.add('  <h:head>\n');
  writeElement(el('h:title', {}, [{ text: text(survey['title']) ?? '' }]), '    ', out);

  // The model's parts are written as they are made, in the order they always were made (the
  // first error found stays the one reported).
  const model = el('model', { 'odk:xforms-version': '1.0.0' });
  if (entityVersion) setAttr(model, 'entities:entities-version', entityVersion);
  out.add(openTagLine('    ', model));
  const submissionUrl = text(survey['submission_url']);
  const publicKey = text(survey['public_key']);
  const autoSend = text(survey['auto_send']);
  const autoDelete = text(survey['auto_delete']);
  const clientEditable = survey['client_editable'] === true;
  if (submissionUrl || publicKey || autoSend || autoDelete || clientEditable) {
    const submission = el('submission');
    if (submissionUrl) {
      setAttr(submission, 'action', submissionUrl);
      setAttr(submission, 'method', 'post');
    }
    if (publicKey) setAttr(submission, 'base64RsaPublicKey', publicKey);
    if (autoSend) setAttr(submission, 'orx:auto-send', autoSend);
    if (autoDelete) setAttr(submission, 'orx:auto-delete', autoDelete);
    if (clientEditable) setAttr(submission, 'odk:client-editable', 'true');
    writeElement(submission, '      ', out);
  }
  if (translations.languages.length > 0) writeItext(translations, defaultLanguage, refs, '      ', out);
  writeElement(el('instance', {}, [primaryInstance(tree, refs, survey)]), '      ', out);
  for (const instance of secondaryInstances(tree)) {
    if ('tag' in instance) writeElement(instance, '      ', out);
    else if ('block' in instance) instance.block(out);
  }
  body.writeModelBindings('      ', out);
  out.add('    </model>\n  </h:head>\n');

  const bodyNode: XmlElement = el('h:body', {}, body.children(tree.root));
  const style = text(survey['style']);
  if (style) setAttr(bodyNode, 'class', style);
  writeElement(bodyNode, '  ', out);
  out.add('</h:html>\n');
  return { xml: out.text(), translations };
}

export { isObject };
