// Finished records that could not be sent yet, kept in the browser (IndexedDB) with their files
// until the server has them. Each is sent as it was made, with the instanceID the form gave it, so
// a record whose answer was lost on the way and is sent again is answered 202 (a duplicate) and
// stored once. A record the server refuses stays, with the server's reason, until the person
// discards it: nothing finished is dropped silently.
import { keptFile, openDeviceStore as open, type WaitingRecord } from './device-store.ts';
import { submit, type SubmissionResult } from './server.ts';

export type { WaitingRecord };

/** Keeps a finished record on this device. */
export async function keep(formId: number, instance: File, attachments: readonly File[]): Promise<void> {
  const record: WaitingRecord = {
    formId,
    instance: new Blob([instance], { type: instance.type || 'text/xml' }),
    attachments: attachments.map(keptFile),
    savedAt: new Date().toISOString(),
  };
  await (await open()).add('records', record);
}

export async function waiting(formId: number): Promise<WaitingRecord[]> {
  return (await open()).getAllFromIndex('records', 'formId', formId);
}

export async function discard(id: number): Promise<void> {
  await (await open()).delete('records', id);
}

function asFiles(record: WaitingRecord): { instance: File; attachments: File[] } {
  return {
    instance: new File([record.instance], 'submission.xml', { type: 'text/xml' }),
    attachments: record.attachments.map((file) => new File([file.blob], file.name, { type: file.type })),
  };
}

/** Whether an answer means the record may be tried again later (no connection, the server busy or down). */
export function worthRetrying(result: SubmissionResult): boolean {
  // 401: the session ended; the record waits for the person to sign in again.
  return result.status === 0 || result.status === 401 || result.status === 408 || result.status === 429 || result.status >= 500;
}

/**
 * Sends this form's waiting records, oldest first, one tab at a time (a Web Lock), stopping at the
 * first that cannot reach the server. Answers how many were sent.
 */
export async function sendWaiting(formId: number): Promise<number> {
  const run = async (): Promise<number> => {
    let sent = 0;
    for (const record of await waiting(formId)) {
      if (record.refused !== undefined || record.id === undefined) continue;
      const files = asFiles(record);
      const result = await submit(formId, files.instance, files.attachments);
      if (result.ok) {
        await discard(record.id);
        sent += 1;
      } else if (worthRetrying(result)) {
        break;
      } else {
        await (await open()).put('records', { ...record, refused: result.message });
      }
    }
    return sent;
  };
  return navigator.locks ? navigator.locks.request(`gather-outbox-${formId}`, run) : run();
}
