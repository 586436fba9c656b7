// What a web form asks of the server: the OpenRosa calls a device makes (the form's list entry, its
// XForm, manifest and media, the submission) and, to edit, the record's XML and files from the
// data API. The browser's session cookie authenticates them, with the CSRF token on the post; a
// caller without one is anonymous, as a device without credentials is.
import { api, currentCsrfToken, type User } from '../api.ts';
import { messages } from './messages.ts';

const OPENROSA = { 'x-openrosa-version': '1.0', 'x-requested-with': 'XMLHttpRequest' };

/** A refusal worth showing as it is: the message, and whether signing in could help. */
export class FormUnavailable extends Error {
  constructor(
    message: string,
    readonly signInMayHelp = false,
  ) {
    super(message);
  }
}

export interface PublishedForm {
  readonly title: string;
  readonly xml: string;
  /** Media by the file name the form uses (jr://images/<name>), at their download addresses. */
  readonly media: ReadonlyMap<string, string>;
}

/** An address the server gave (with its BASE_URL) as a path on this origin, where the cookie goes. */
function local(address: string): string {
  const url = new URL(address, window.location.origin);
  return `${url.pathname}${url.search}`;
}

function xml(text: string): Document {
  return new DOMParser().parseFromString(text, 'application/xml');
}

/** The text of an OpenRosa or JSON refusal. */
function refusal(status: number, text: string): string {
  const message = /<message[^>]*>([^<]*)<\/message>/.exec(text)?.[1];
  if (message) return message;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (typeof body['detail'] === 'string') return body['detail'];
  } catch {
    // not JSON: the status says enough
  }
  return messages.serverAnswered(status);
}

async function get(path: string, headers: Record<string, string> = OPENROSA): Promise<Response> {
  try {
    return await fetch(path, { headers, credentials: 'same-origin', cache: 'no-cache' });
  } catch {
    throw new FormUnavailable(messages.unreachable);
  }
}

export async function whoIsSignedIn(): Promise<User | null> {
  return (await api.session()).user;
}

/** A response's text, or the refusal it carries. */
async function documentText(response: Promise<Response>): Promise<string> {
  const answer = await response;
  const text = await answer.text();
  if (!answer.ok) throw new FormUnavailable(refusal(answer.status, text));
  return text;
}

/**
 * The form as the caller may fill it, or why not. Its list entry and XForm are asked for together
 * (by the form's own addresses), and its manifest as soon as the XForm names a file (jr://…): a
 * form without media files needs none. The list entry says whether the caller may fill it.
 */
export async function loadForm(formId: number): Promise<PublishedForm> {
  const form = documentText(get(`/forms/${formId}/form.xml`));
  const media = form.then((text) => (text.includes('jr://') ? loadManifest(`/forms/${formId}/xformsManifest`) : new Map<string, string>()));
  // Refused, the list's reason is the one to give: the others' refusals need no handler of their own.
  media.catch(() => undefined);
  const listed = await get(`/forms/${formId}/formList`);
  if (listed.status === 401) throw new FormUnavailable(messages.signInToFill, true);
  if (listed.status === 404) throw new FormUnavailable(messages.noSuchForm);
  if (!listed.ok) throw new FormUnavailable(refusal(listed.status, await listed.text()));
  const entry = xml(await listed.text()).getElementsByTagName('xform')[0];
  if (!entry?.getElementsByTagName('downloadUrl')[0]?.textContent) throw new FormUnavailable(messages.noRole, true);
  const title = entry.getElementsByTagName('name')[0]?.textContent ?? '';
  return { title, xml: await form, media: await media };
}

async function loadManifest(path: string): Promise<Map<string, string>> {
  const text = await documentText(get(path));
  const media = new Map<string, string>();
  for (const file of Array.from(xml(text).getElementsByTagName('mediaFile'))) {
    const name = file.getElementsByTagName('filename')[0]?.textContent;
    const address = file.getElementsByTagName('downloadUrl')[0]?.textContent;
    if (name && address) media.set(name, local(address));
  }
  return media;
}

/** An unpublished draft (POST /api/v1/forms/survey_preview), to preview: its XForm, no media. */
export async function loadDraft(username: string, fileName: string): Promise<PublishedForm> {
  const query = new URLSearchParams({ username, filename: fileName });
  const draft = await get(`/api/v1/forms/survey_preview.xml?${query.toString()}`, { accept: 'application/xml', 'x-requested-with': 'XMLHttpRequest' });
  if (!draft.ok) throw new FormUnavailable(refusal(draft.status, await draft.text()));
  const xml = await draft.text();
  const title = new DOMParser().parseFromString(xml, 'application/xml').getElementsByTagNameNS('*', 'title')[0]?.textContent ?? messages.draftTitle;
  return { title, xml, media: new Map() };
}

export interface SubmissionResult {
  readonly ok: boolean;
  readonly status: number;
  readonly message: string;
}

/** Posts the record as a device does: multipart, the instance first, then its files. */
export async function submit(formId: number, instance: File, attachments: readonly File[]): Promise<SubmissionResult> {
  const body = new FormData();
  body.append('xml_submission_file', instance, 'submission.xml');
  for (const file of attachments) body.append(file.name, file, file.name);
  const headers: Record<string, string> = { ...OPENROSA };
  const csrf = currentCsrfToken();
  if (csrf) headers['x-csrftoken'] = csrf;
  let response: Response;
  try {
    response = await fetch(`/forms/${formId}/submission`, { method: 'POST', body, headers, credentials: 'same-origin' });
  } catch {
    return { ok: false, status: 0, message: messages.unreachableNotSent };
  }
  const text = await response.text();
  return { ok: response.status === 201 || response.status === 202, status: response.status, message: refusal(response.status, text) };
}

export interface StoredRecord {
  readonly xml: string;
  /** The record's files by name, at their download addresses. */
  readonly files: ReadonlyMap<string, string>;
}

/** A record to edit: its XML and files, from the data API. */
export async function loadRecord(formId: number, recordId: number): Promise<StoredRecord> {
  const json = { accept: 'application/json', 'x-requested-with': 'XMLHttpRequest' };
  const record = await get(`/api/v1/data/${formId}/${recordId}`, json);
  if (record.status === 401) throw new FormUnavailable(messages.signInToEdit, true);
  if (!record.ok) throw new FormUnavailable(record.status === 404 ? messages.noSuchRecord : refusal(record.status, await record.text()));
  const answers = (await record.json()) as { _attachments?: { filename?: string; download_url?: string }[] };
  const files = new Map<string, string>();
  for (const attachment of answers._attachments ?? []) {
    const name = attachment.filename?.split('/').pop();
    if (name && attachment.download_url) files.set(name, local(attachment.download_url));
  }
  const stored = await get(`/api/v1/data/${formId}/${recordId}.xml`, { accept: 'application/xml', 'x-requested-with': 'XMLHttpRequest' });
  if (!stored.ok) throw new FormUnavailable(refusal(stored.status, await stored.text()));
  return { xml: await stored.text(), files };
}

export async function download(path: string): Promise<Response> {
  return get(path, { 'x-requested-with': 'XMLHttpRequest' });
}
