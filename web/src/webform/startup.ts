// What a web form page asks for as soon as it starts, all at once and while the form engine's
// scripts are still loading (app.ts is imported after): who is signed in, the form (list entry,
// XForm, manifest), the record being edited and this page's draft. The page awaits each when it
// needs it. Every promise has a handler from the start: when a refusal (a form this person may
// not fill) rejects one while the page still awaits another, it is not an unhandled rejection.
import type { User } from '../api.ts';
import { draftKey, readDraft, type Draft } from './drafts.ts';
import type { WebFormPage } from './paths.ts';
import { loadDraft, loadForm, loadRecord, whoIsSignedIn, type PublishedForm, type StoredRecord } from './server.ts';

export interface Startup {
  readonly user: Promise<User | null>;
  /** The form to fill (a published one, or an unpublished draft to preview). */
  readonly form: Promise<PublishedForm>;
  readonly record: Promise<StoredRecord | undefined>;
  /** This page's draft on this device, if any (never rejects: without storage there is none). */
  readonly draft: Promise<Draft | undefined>;
  /** Where the draft is kept, undefined where nothing is (previews). */
  readonly draftKey: string | undefined;
}

function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

export function startLoading(page: WebFormPage): Startup {
  const key = draftKey(page);
  return {
    user: handled(whoIsSignedIn()),
    form: handled(page.mode === 'draft' ? loadDraft(page.username, page.fileName) : loadForm(page.formId)),
    record: handled(page.mode === 'edit' ? loadRecord(page.formId, page.recordId) : Promise.resolve(undefined)),
    draft: key === undefined ? Promise.resolve(undefined) : readDraft(key).catch(() => undefined),
    draftKey: key,
  };
}
