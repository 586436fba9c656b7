// The `formId` of downloadSubmission, which Briefcase builds from the blank form as
//   <id_string>[@version=<version> and @uiVersion=null]/<root element>[@key=uuid:<instanceID>]
// (the bracket after the id_string may be missing). Only the id_string and the key choose the
// record, as in onadata; the version and root are what Briefcase read from the form.

export interface SubmissionKey {
  readonly idString: string;
  /** The record's uuid without its `uuid:` prefix. */
  readonly uuid: string;
}

export type ParsedSubmissionKey = { readonly ok: true; readonly key: SubmissionKey } | { readonly ok: false; readonly message: string };

const KEY_AT_END = /\[@key=([^\]]*)\]\s*$/;

function invalid(raw: string, why: string): ParsedSubmissionKey {
  const shown = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  return { ok: false, message: `Invalid formId "${shown}": ${why} Expected id_string[@version=… and @uiVersion=…]/root[@key=uuid:…].` };
}

export function parseSubmissionKey(raw: string | undefined): ParsedSubmissionKey {
  const text = (raw ?? '').trim();
  if (text === '') return { ok: false, message: 'formId is required: id_string[@version=… and @uiVersion=…]/root[@key=uuid:…].' };
  // The slash that ends the form part is the first one after the form's bracket, if it has one.
  const bracket = text.indexOf('[');
  const firstSlash = text.indexOf('/');
  const formEnd = bracket !== -1 && bracket < firstSlash ? text.indexOf(']', bracket) : -1;
  const slash = formEnd === -1 ? firstSlash : text.indexOf('/', formEnd);
  if (slash === -1) return invalid(text, 'it names no record.');
  const formPart = text.slice(0, slash);
  const idString = (bracket !== -1 && bracket < slash ? formPart.slice(0, bracket) : formPart).trim();
  if (idString === '') return invalid(text, 'it has no form id.');
  const key = KEY_AT_END.exec(text.slice(slash + 1))?.[1]?.trim();
  if (key === undefined) return invalid(text, 'it has no [@key=…].');
  const uuid = key.startsWith('uuid:') ? key.slice('uuid:'.length) : key;
  if (uuid === '') return invalid(text, 'its key is empty.');
  return { ok: true, key: { idString, uuid } };
}
