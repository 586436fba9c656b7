// Uploaded files, content-addressed by SHA-256 and kept in the database so that a write of a form
// and its file commit or roll back together on both backends.
import { createHash } from 'node:crypto';
import type { DbOrTx } from '../../platform/db.ts';

export async function putBlob(db: DbOrTx, data: Uint8Array, contentType: string): Promise<string> {
  const sha256 = createHash('sha256').update(data).digest('hex');
  await db
    .insertInto('blobs')
    .values({ sha256, content_type: contentType, size: data.byteLength, data })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .execute();
  return sha256;
}

export async function getBlob(db: DbOrTx, sha256: string): Promise<{ data: Uint8Array; content_type: string } | undefined> {
  return db.selectFrom('blobs').select(['data', 'content_type']).where('sha256', '=', sha256).executeTakeFirst();
}
