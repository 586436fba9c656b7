// Statements of a publish that run over every staged row in one transaction must find each
// record by its key: on PGlite a statement holds the server's only session and its event loop.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createUser, publishForm, startTestServer, type TestServer } from '../../../test/helpers.ts';
import { countLiveEditTargets, countLiveEditTargetsQuery } from './repository.ts';

const RECORDS = 300;
let server: TestServer;
let formId: number;

before(async () => {
  server = await startTestServer({ WORKERS: '0' });
  const bob = await createUser(server.app, 'bob');
  const content = readFileSync(join(import.meta.dirname, '../../../test/fixtures/imports/tutorial.xlsx'));
  formId = await publishForm(server.app, bob, { name: 'xls_file', fileName: 'tutorial.xlsx', content, contentType: 'application/octet-stream' });
});
after(() => server.close());

interface PlanNode {
  'Relation Name'?: string;
  'Node Type'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** How each node of the plan reads instances: an index's name, or the node type. */
function instancesReads(node: PlanNode): string[] {
  const own = node['Relation Name'] === 'instances' ? [node['Index Name'] ?? node['Node Type'] ?? '?'] : [];
  return [...own, ...(node.Plans ?? []).flatMap(instancesReads)];
}

test('the check of staged edits probes each target by (form_id, uuid), deleted and unknown targets not counted', async () => {
  const db = server.deps.db;
  await sql`INSERT INTO instances (form_id, uuid, xml, json)
    SELECT ${formId}, 'u' || n, '<data/>', '{}'::jsonb FROM generate_series(1, ${RECORDS}) AS n`.execute(db);
  await sql`UPDATE instances SET deleted_at = now() WHERE form_id = ${formId} AND uuid = 'u7'`.execute(db);
  // An edit of each record, of an unknown one, and one addition.
  await sql`INSERT INTO import_rows (import_id, seq, target_uuid, uuid, xml, json, version, total_media, media, has_geopoint)
    SELECT 'imp', n, CASE WHEN n <= ${RECORDS + 1} THEN 'u' || n END, 'new' || n, '<data/>', '{}', '', 0, '[]', false
    FROM generate_series(1, ${RECORDS + 2}) AS n`.execute(db);

  assert.equal(await countLiveEditTargets(db, 'imp', formId), RECORDS - 1);
  const explained = await sql<{ 'QUERY PLAN': unknown }>`EXPLAIN (FORMAT JSON) ${countLiveEditTargetsQuery('imp', formId)}`.execute(db);
  const raw = explained.rows[0]?.['QUERY PLAN'];
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: PlanNode }>;
  const root = plan[0]?.Plan;
  assert.ok(root, 'a plan');
  assert.deepEqual([...new Set(instancesReads(root))], ['instances_form_uuid_key']);
});
