// `npm run bench -- footprint [RECORDS] [pglite|postgres] [--maps]` (default 100,000, both
// backends; --maps prints the largest memory mappings at each step): the server process's
// memory, from /proc (VmRSS now, VmHWM the peak so far), on a fresh data directory (PGlite) or a
// fresh database (PostgreSQL):
//   - after start, idle;
//   - after seeding: the bench form published and SEEDED_VIA_HTTP submissions posted through
//     HTTP (the rest of RECORDS are then loaded with SQL while the server is stopped, as
//     bench/export.ts does, since HTTP would take minutes), then again after a restart;
//   - during and after a CSV export of all RECORDS records (a direct download).
// Targets (issue 24): idle ≤ 150 MB on PGlite and ≤ 100 MB on PostgreSQL, after start and after
// the export. "Idle" figures are read SETTLE_MS after the last request, and LONG_SETTLE_MS after
// the export too.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { BENCH_FORM, benchInstance, submissionBody } from './_instances.ts';
import { cpuSeconds, loadAverage, machineCheckMs, resetPeakRss } from './_proc.ts';
import { createAccount, POSTGRES_SERVER, postgresAvailable, printTable, startServer, type Backend, type BenchServer } from './_server.ts';
import { buildFormModel, type FormModel } from '../src/lib/form-model/model.ts';
import { parseInstance } from '../src/lib/instance-xml.ts';

const PORT = 8741;
const SEEDED_VIA_HTTP = 1_000;
const HTTP_CONCURRENCY = 8;
const BATCH = 1_000;
const SETTLE_MS = 3_000;
/**
 * V8 gives back the heap an export grew only once the process has been idle a while (its memory
 * reducer): the export's idle figure is read again this long after it.
 */
const LONG_SETTLE_MS = 30_000;
const DATABASE = 'gather_bench_footprint';
const SECRET_KEY = 'gather-bench-footprint-key';
const USERNAME = 'footprint';
const TARGET_MB: Record<Backend, number> = { pglite: 150, postgres: 100 };

interface Memory {
  rssMb: number;
  hwmMb: number;
}

function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string): number => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024);
  return { rssMb: mb('VmRSS'), hwmMb: mb('VmHWM') };
}

/**
 * Where the resident memory is (`--maps`): the largest mappings by resident size. The WebAssembly
 * heap is the writable mapping of 128 MB or more; V8's heap is many small ones, summed here.
 */
function mappings(pid: number): string {
  const found: Array<{ name: string; sizeMb: number; rssKb: number }> = [];
  let current: { name: string; sizeMb: number; rssKb: number } | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const sizeMb = Math.round((parseInt(header[2] ?? '0', 16) - parseInt(header[1] ?? '0', 16)) / 2 ** 20);
      current = { name: `${header[4] || '[anon]'} ${header[3] ?? ''}`, sizeMb, rssKb: 0 };
      found.push(current);
    } else if (current && line.startsWith('Rss:')) current.rssKb = Number(/\d+/.exec(line)?.[0] ?? 0);
  }
  const small = found.filter((m) => m.sizeMb < 4).reduce((sum, m) => sum + m.rssKb, 0);
  const big = found.filter((m) => m.sizeMb >= 4).sort((a, b) => b.rssKb - a.rssKb).slice(0, 5);
  return [...big.map((m) => `${Math.round(m.rssKb / 1024)} MB of ${m.name} (${m.sizeMb} MB)`), `${Math.round(small / 1024)} MB in mappings under 4 MB`].join('; ');
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/** A statement runner over either backend's own client, opened while the server is stopped. */
interface Sql {
  query<T>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

async function openSql(backend: Backend, dataDir: string): Promise<Sql> {
  if (backend === 'postgres') {
    const url = new URL(POSTGRES_SERVER);
    url.pathname = `/${DATABASE}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    return { query: async (text, params) => (await client.query(text, params)).rows, close: () => client.end() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(join(dataDir, 'pgdata'));
  return { query: async <T>(text: string, params?: unknown[]) => (await db.query<T>(text, params)).rows, close: () => db.close() };
}

/** The record as a submission stores it (src/modules/submissions/receive.ts; bench/export.ts checks the match). */
function storedRecord(xml: string, schema: FormModel, idString: string, formVersion: string): Record<string, unknown> {
  const parsed = parseInstance(xml, schema, { maxBytes: 10_000_000 });
  if (!parsed.ok) throw new Error(`bench instance does not parse: ${parsed.error}`);
  const { record, meta } = parsed;
  const uuid = meta.uuid ?? randomUUID();
  const version = meta.version ?? formVersion;
  const json = {
    ...record,
    _uuid: uuid,
    _xform_id_string: meta.idString ?? idString,
    _version: version,
    _status: 'submitted_via_web',
    _geolocation: meta.geolocation,
    _duration: meta.duration,
    _bamboo_dataset_id: '',
    _tags: [],
    _notes: [],
  };
  return { u: uuid, x: xml, j: json, v: version, g: meta.geolocation[0] !== null, c: JSON.parse(meta.repeatCounts) as unknown };
}

/** Loads records up to `records` with SQL (JSON rows, which both backends take as one parameter). */
async function loadRecords(sql: Sql, records: number): Promise<void> {
  const form = (await sql.query<{ id: number; id_string: string; version: string; owner_id: number; json: Record<string, unknown> }>(
    'SELECT id, id_string, version, owner_id, json FROM forms WHERE deleted_at IS NULL ORDER BY id LIMIT 1',
  ))[0];
  if (!form) throw new Error('the bench form is missing');
  const schema = buildFormModel(form.json);
  const have = Number((await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM instances WHERE form_id = $1', [form.id]))[0]?.n ?? 0);
  const base = Date.parse('2026-11-01T00:00:00Z');
  for (let n = have; n < records; n += BATCH) {
    const rows = [];
    for (let i = n; i < Math.min(records, n + BATCH); i++) {
      rows.push({ ...storedRecord(benchInstance(i), schema, form.id_string, form.version), t: new Date(base + i * 1000).toISOString() });
    }
    await sql.query(
      `INSERT INTO instances (form_id, uuid, xml, json, version, submitted_by, date_created, date_modified, total_media, has_geopoint, repeat_counts)
       SELECT $1, r.u, r.x, r.j, r.v, $2, r.t, r.t, 0, r.g, r.c
       FROM jsonb_to_recordset($3::jsonb) AS r(u text, x text, j jsonb, v text, t timestamptz, g boolean, c jsonb)`,
      [form.id, form.owner_id, JSON.stringify(rows)],
    );
  }
  await sql.query('DELETE FROM form_stats WHERE form_id = $1', [form.id]);
  await sql.query(
    `INSERT INTO form_stats (form_id, shard, submissions, geopoints, last_submission_time)
     SELECT form_id, id % 16, count(*), count(*) FILTER (WHERE has_geopoint), max(date_created)
     FROM instances WHERE form_id = $1 AND deleted_at IS NULL GROUP BY 1, 2`,
    [form.id],
  );
  await sql.query('VACUUM ANALYZE instances');
}

async function publishAndSubmit(server: BenchServer, token: string, count: number): Promise<number> {
  const auth = { authorization: `Token ${token}` };
  const boundary = '----gatherfootprint';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="xls_file"; filename="bench_household.xlsx"\r\nContent-Type: application/vnd.openxmlformats-officedocument.spreadsheetml.sheet\r\n\r\n`),
    readFileSync(BENCH_FORM),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const published = await fetch(`${server.baseUrl}/api/v1/forms`, { method: 'POST', headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
  if (published.status !== 201) throw new Error(`publishing the bench form failed: ${published.status} ${await published.text()}`);
  const formId = ((await published.json()) as { formid: number }).formid;
  let next = 0;
  const post = async (): Promise<void> => {
    while (next < count) {
      const submission = submissionBody(benchInstance(next++));
      const res = await fetch(`${server.baseUrl}/${USERNAME}/submission`, { method: 'POST', headers: { ...auth, 'content-type': submission.contentType }, body: submission.body });
      if (res.status !== 201) throw new Error(`submission failed: ${res.status} ${await res.text()}`);
    }
  };
  await Promise.all(Array.from({ length: HTTP_CONCURRENCY }, post));
  return formId;
}

/** Downloads the form's CSV, counting its bytes. */
function downloadCsv(server: BenchServer, token: string, formId: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${server.baseUrl}/api/v1/forms/${formId}.csv`, { headers: { authorization: `Token ${token}` } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
      response.on('end', () => (response.statusCode === 200 ? resolve(bytes) : reject(new Error(`CSV export: ${response.statusCode}`))));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

interface Row {
  phase: string;
  memory: Memory;
  note: string;
}

async function measureBackend(backend: Backend, records: number, showMaps: boolean): Promise<Row[]> {
  const rows: Row[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gather-footprint-'));
  const env = { DATA_DIR: dataDir, SECRET_KEY, WORKERS: '1' };
  const keep = backend === 'postgres' ? { keepDatabase: DATABASE } : {};
  if (backend === 'postgres') {
    const admin = new pg.Client({ connectionString: POSTGRES_SERVER });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    await admin.end();
  }
  const record = (phase: string, server: BenchServer, note = ''): void => {
    const row = { phase, memory: memory(server.process.pid ?? 0), note };
    rows.push(row);
    console.log(`  ${backend}: ${phase}: RSS ${row.memory.rssMb} MB, peak ${row.memory.hwmMb} MB${note ? ` (${note})` : ''}`);
    if (showMaps) console.log(`    ${mappings(server.process.pid ?? 0)}`);
  };
  try {
    let server = await startServer(backend, PORT, env, [], keep);
    let formId: number;
    let token: string;
    try {
      await settle();
      record('after start (empty)', server);
      token = await createAccount(server.baseUrl, USERNAME);
      const started = performance.now();
      formId = await publishAndSubmit(server, token, SEEDED_VIA_HTTP);
      const seconds = (performance.now() - started) / 1000;
      await settle();
      record(`after seeding ${SEEDED_VIA_HTTP.toLocaleString('en')} via HTTP`, server, `${Math.round(SEEDED_VIA_HTTP / seconds)} submissions/s`);
    } finally {
      await server.stop();
    }
    const loadStarted = performance.now();
    const sql = await openSql(backend, dataDir);
    try {
      await loadRecords(sql, records);
    } finally {
      await sql.close();
    }
    console.log(`  ${backend}: loaded ${records.toLocaleString('en')} records with SQL in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s`);
    server = await startServer(backend, PORT, env, [], keep);
    try {
      await settle();
      record(`after start (${records.toLocaleString('en')} records)`, server);
      const pid = server.process.pid ?? 0;
      resetPeakRss(pid);
      const cpu = cpuSeconds(pid);
      const started = performance.now();
      const bytes = await downloadCsv(server, token, formId);
      const seconds = (performance.now() - started) / 1000;
      const during = memory(pid);
      rows.push({ phase: 'during the CSV export', memory: during, note: `${seconds.toFixed(1)} s, server CPU ${(cpuSeconds(pid) - cpu).toFixed(1)} s, ${(bytes / 1e6).toFixed(0)} MB` });
      console.log(`  ${backend}: CSV export: ${seconds.toFixed(1)} s, peak RSS ${during.hwmMb} MB`);
      await settle();
      record('after the CSV export', server);
      await new Promise((resolve) => setTimeout(resolve, LONG_SETTLE_MS - SETTLE_MS));
      record(`${LONG_SETTLE_MS / 1000} s after the CSV export`, server);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

export async function main(args: string[]): Promise<void> {
  const records = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
  const named = args.filter((a): a is Backend => a === 'pglite' || a === 'postgres');
  const backends: Backend[] = named.length ? named : ['pglite', 'postgres'];
  if (backends.includes('postgres') && !(await postgresAvailable())) {
    console.log(`footprint: no PostgreSQL at ${POSTGRES_SERVER}; PGlite only`);
    backends.splice(backends.indexOf('postgres'), 1);
  }
  const checkBefore = machineCheckMs();
  const table: Array<Array<string | number>> = [];
  for (const backend of backends) {
    console.log(`footprint on ${backend}: ${records.toLocaleString('en')} records of the bench form`);
    for (const row of await measureBackend(backend, records, args.includes('--maps'))) {
      const idle = row.phase.startsWith('after start') || row.phase.endsWith('after the CSV export');
      const verdict = idle ? (row.memory.rssMb <= TARGET_MB[backend] ? `≤ ${TARGET_MB[backend]}: met` : `≤ ${TARGET_MB[backend]}: NOT met`) : '';
      table.push([backend, row.phase, row.memory.rssMb, row.memory.hwmMb, verdict, row.note]);
    }
  }
  printTable(['backend', 'phase', 'RSS MB', 'peak MB', 'idle target', 'note'], table);
  console.log(`RSS and peak (VmRSS, VmHWM) of the server process; idle figures ${SETTLE_MS / 1000} s after the last request (and ${LONG_SETTLE_MS / 1000} s after the export); peak during the export reset before it`);
  console.log(`machine load average: ${loadAverage()}; machine check ${checkBefore} ms before, ${machineCheckMs()} ms after (lower is faster)`);
}
