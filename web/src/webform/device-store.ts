// The browser's storage for the web forms (IndexedDB, one database): finished records waiting to
// be sent (outbox.ts) and drafts of records being filled in (drafts.ts).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

/** A file kept with a record or a draft. */
export interface KeptFile {
  readonly name: string;
  readonly type: string;
  readonly blob: Blob;
}

export interface WaitingRecord {
  readonly id?: number;
  readonly formId: number;
  readonly instance: Blob;
  readonly attachments: readonly KeptFile[];
  readonly savedAt: string;
  /** The server's reason when it refused the record (it stays until discarded). */
  readonly refused?: string;
}

export interface Draft {
  /** Which page it belongs to (drafts.ts names them): one draft per form page or record edited. */
  readonly key: string;
  readonly xml: string;
  readonly attachments: readonly KeptFile[];
  readonly savedAt: string;
}

interface DeviceSchema extends DBSchema {
  records: { key: number; value: WaitingRecord; indexes: { formId: number } };
  drafts: { key: string; value: Draft };
}

export type DeviceStore = IDBPDatabase<DeviceSchema>;

let database: Promise<DeviceStore> | undefined;

export function openDeviceStore(): Promise<DeviceStore> {
  if (database) return database;
  const opening = openDB<DeviceSchema>('gather-web-forms', 2, {
    upgrade(db, oldVersion) {
      if (oldVersion < 1) db.createObjectStore('records', { keyPath: 'id', autoIncrement: true }).createIndex('formId', 'formId');
      if (oldVersion < 2) db.createObjectStore('drafts', { keyPath: 'key' });
    },
    // A page of a newer version, in another tab, needs this connection closed to upgrade the
    // database; this page opens it again when it next needs it.
    blocking() {
      void opening.then((db) => db.close());
      if (database === opening) database = undefined;
    },
  });
  database = opening;
  return opening;
}

export function keptFile(file: File): KeptFile {
  return { name: file.name, type: file.type, blob: new Blob([file], { type: file.type }) };
}
