// Drafts: the answers (and photos, files…) of a record being filled in, kept on this device so that
// they survive a reload, a closed tab or a lost network. One draft per fill page (per form) and
// per record being edited. A draft is saved shortly after the last input and when the page is
// hidden, only when the answers changed; it is deleted once the record is sent or waiting in the
// outbox. The engine's answers are read through form-root.ts: without it, nothing is saved.
import type { EditInstanceOptions } from '@getodk/web-forms';
import { keptFile, openDeviceStore, type Draft } from './device-store.ts';
import type { FormRoot } from './form-root.ts';
import type { WebFormPage } from './paths.ts';

export type { Draft };

/** How long after the last input a draft is saved. */
const QUIET_MS = 400;

/** The draft's key for a page, or undefined where nothing is kept (previews). */
export function draftKey(page: WebFormPage): string | undefined {
  switch (page.mode) {
    case 'fill':
    case 'single':
      return `form:${page.formId}`;
    case 'edit':
      return `record:${page.formId}:${page.recordId}`;
    default:
      return undefined;
  }
}

/**
 * This page's draft. Storage that does not answer in time (a tab of an older version still holds
 * the database it must upgrade) counts as no draft, rather than holding the form back.
 */
export async function readDraft(key: string, waitMs = 2_000): Promise<Draft | undefined> {
  let timer: number | undefined;
  const late = new Promise<undefined>((resolve) => (timer = window.setTimeout(resolve, waitMs, undefined)));
  try {
    return await Promise.race([openDeviceStore().then((db) => db.get('drafts', key)), late]);
  } finally {
    window.clearTimeout(timer);
  }
}

export async function deleteDraft(key: string): Promise<void> {
  await (await openDeviceStore()).delete('drafts', key);
}

function metaChild(document: Document, name: string): Element | undefined {
  return Array.from(document.getElementsByTagNameNS('*', name)).find((element) => element.parentElement?.localName === 'meta');
}

/**
 * A draft as the engine's edit path loads it. Loading an instance to edit, the engine gives it a
 * new instanceID and names the loaded one as its deprecatedID; a draft saved while editing already
 * carries both, so its instanceID goes back to the record's (the deprecatedID) before it is loaded.
 */
export function draftInstance(draft: Draft): EditInstanceOptions {
  const files = new Map(draft.attachments.map((file) => [file.name, file]));
  return {
    resolveInstance: async () => {
      const document = new DOMParser().parseFromString(draft.xml, 'application/xml');
      const deprecated = metaChild(document, 'deprecatedID');
      const instanceId = metaChild(document, 'instanceID');
      if (!deprecated || !instanceId || document.getElementsByTagName('parsererror').length > 0) return draft.xml;
      instanceId.textContent = deprecated.textContent;
      deprecated.remove();
      return new XMLSerializer().serializeToString(document);
    },
    attachmentFileNames: [...files.keys()],
    resolveAttachment: async (name: string) => {
      const file = files.get(name);
      return file ? new Response(file.blob, { headers: { 'content-type': file.type || 'application/octet-stream' } }) : new Response(null, { status: 404 });
    },
  };
}

/**
 * A record resumed from a draft on a fill page is a new record: the deprecatedID the engine's edit
 * path gave it would make the server take it for an edit of a record that never existed.
 */
export async function asNewRecord(instance: File): Promise<File> {
  const text = await instance.text();
  if (!text.includes('deprecatedID')) return instance;
  const document = new DOMParser().parseFromString(text, 'application/xml');
  const deprecated = metaChild(document, 'deprecatedID');
  if (!deprecated) return instance;
  deprecated.remove();
  return new File([new XMLSerializer().serializeToString(document)], instance.name, { type: instance.type });
}

const INPUTS = ['pointerdown', 'keydown', 'input', 'change', 'click'] as const;

/**
 * Saves the draft of the form a page shows. It listens to the whole document (the engine's date
 * pickers and menus open outside the form) in the capture phase, so that it reads the answers as
 * they stood before the engine handles an input: that is what the draft is compared with, and a
 * form only looked at (or a new record after Send) leaves no draft.
 */
export class DraftKeeper {
  private root: FormRoot | undefined;
  private savedXml: string | undefined;
  private timer: number | undefined;
  private held = false;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly key: string,
    private readonly findRoot: () => FormRoot | undefined,
    private readonly onSaved: (savedAt: Date) => void,
  ) {}

  private readonly onInput = (): void => {
    this.current();
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => void this.saveNow(), QUIET_MS);
  };

  private readonly onHidden = (): void => {
    if (document.visibilityState === 'hidden') void this.saveNow();
  };

  private readonly onPageHide = (): void => void this.saveNow();

  /** The form's root node; a new one (a new record) is the new point of comparison. */
  private current(): FormRoot | undefined {
    const root = this.findRoot();
    if (root && root.node !== this.root?.node) {
      this.root = root;
      this.savedXml = root.currentXml();
    }
    return root;
  }

  start(): void {
    for (const type of INPUTS) document.addEventListener(type, this.onInput, { capture: true, passive: true });
    document.addEventListener('visibilitychange', this.onHidden);
    window.addEventListener('pagehide', this.onPageHide);
  }

  stop(): void {
    window.clearTimeout(this.timer);
    for (const type of INPUTS) document.removeEventListener(type, this.onInput, { capture: true });
    document.removeEventListener('visibilitychange', this.onHidden);
    window.removeEventListener('pagehide', this.onPageHide);
  }

  /** Saves now if the answers changed since they were last saved (or the form opened). */
  saveNow(): Promise<void> {
    window.clearTimeout(this.timer);
    this.saving = this.saving.then(async () => {
      const root = this.current();
      if (this.held || !root) return;
      const xml = root.currentXml();
      if (xml === undefined || xml === this.savedXml) return;
      const payload = await root.payload();
      if (!payload || this.held) return;
      const draft: Draft = {
        key: this.key,
        xml: await payload.instance.text(),
        attachments: payload.attachments.map(keptFile),
        savedAt: new Date().toISOString(),
      };
      try {
        await (await openDeviceStore()).put('drafts', draft);
        this.savedXml = xml;
        this.onSaved(new Date(draft.savedAt));
      } catch {
        // The browser's storage refused (full, or private browsing): the form goes on without drafts.
      }
    });
    return this.saving;
  }

  /** While a record is being sent nothing is saved, so that no draft outlives it. */
  async hold(): Promise<void> {
    this.held = true;
    window.clearTimeout(this.timer);
    await this.saving;
  }

  /** Sent, or kept in the outbox: the draft goes, and the next record is compared afresh. */
  async finished(): Promise<void> {
    await deleteDraft(this.key).catch(() => undefined);
    this.savedXml = undefined;
    this.root = undefined;
  }

  release(): void {
    this.held = false;
  }
}
