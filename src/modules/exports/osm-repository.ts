// SQL for the OSM export: the `.osm` files attached to a set of records.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

export interface OsmAttachment {
  instance_id: number;
  name: string;
  data: Uint8Array;
}

/** The attachments of these records with these file names, with their bytes (OSM files are parsed whole). */
export async function listOsmAttachments(db: DbOrTx, instanceIds: readonly number[], names: readonly string[]): Promise<OsmAttachment[]> {
  if (instanceIds.length === 0 || names.length === 0) return [];
  const result = await sql<OsmAttachment>`
    SELECT a.instance_id, a.name,
      coalesce((SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM blob_chunks c WHERE c.sha256 = a.blob), ''::bytea) AS data
    FROM attachments a JOIN blobs b ON b.sha256 = a.blob
    WHERE a.instance_id = ANY(${[...instanceIds]}::integer[]) AND a.name = ANY(${[...names]}::text[])
    ORDER BY a.instance_id, a.id`.execute(db);
  return result.rows;
}
