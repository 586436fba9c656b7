// `npm run bench -- export [RECORDS]` (default 1,000,000): CSV, XLSX and SAV (zip) exports of
// RECORDS stored submissions of the bench form, by direct download and by job, on PostgreSQL,
// with the server's peak RSS for each.
//
// Loading through HTTP runs at a few hundred submissions a second, far too slow for a million,
// so the records are inserted with SQL here: each instance is the bench template filled with
// varied values, parsed by the server's own parser, and stored as a submission stores it (a few
// are posted through HTTP first and compared with what this loader would write). The loaded
// database is kept and reused, one for each record count (`gather_bench_export_100000`, …), so
// runs of 100,000 and of 1,000,000 records do not reload each other's.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { BENCH_FORM, benchInstance, submissionBody } from './_instances.ts';
import { cpuSeconds, loadAverage, machineCheckMs, peakRssMb, resetPeakRss } from './_proc.ts';
import { createAccount, POSTGRES_SERVER, postgresAvailable, printTable, startServer, type BenchServer } from './_server.ts';
import { buildFormModel, type FormModel } from '../src/lib/form-model/model.ts';
import { parseInstance } from '../src/lib/instance-xml.ts';

const PORT = 8731;
const BATCH = 500;
const STAT_SHARDS = 16;
const FORMATS = ['csv', 'xlsx', 'savzip'] as const;
const USERNAME = 'exporter';

function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_SERVER);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The kept database of `records` records. */
function databaseFor(records: number): string {
  return `gather_bench_export_${records}`;
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The record count of the kept database, or undefined when there is none to reuse. */
async function keptRecords(database: string): Promise<number | undefined> {
  const exists = await withClient(POSTGRES_SERVER, async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount);
  if (!exists) return undefined;
  try {
    return await withClient(databaseUrl(database), async (c) => {
      const row = (await c.query<{ records: number }>('SELECT records FROM bench_export_meta')).rows[0];
      return row?.records;
    });
  } catch {
    return undefined;
  }
}

/** The bench's server on the kept database, its job worker in-process (export jobs run there). */
function startBenchServer(database: string): Promise<BenchServer> {
  // Stored tokens are sealed under the key: it must outlive the temporary DATA_DIR.
  return startServer('postgres', PORT, { WORKERS: '1', SECRET_KEY: 'gather-bench-export-key' }, [], { keepDatabase: database });
}

/** The record as a submission stores it (src/modules/submissions/receive.ts). */
interface StoredRecord {
  uuid: string;
  version: string;
  json: string;
  hasGeopoint: boolean;
  repeatCounts: string;
}

function storedRecord(xml: string, schema: FormModel, idString: string, formVersion: string): StoredRecord {
  const parsed = parseInstance(xml, schema, { maxBytes: 10_000_000 });
  if (!parsed.ok) throw new Error(`bench instance does not parse: ${parsed.error}`);
  const { record, meta } = parsed;
  const uuid = meta.uuid ?? randomUUID();
  const version = meta.version ?? formVersion;
  const json = JSON.stringify({
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
  });
  return { uuid, version, json, hasGeopoint: meta.geolocation[0] !== null, repeatCounts: meta.repeatCounts };
}

interface FormFacts {
  id: number;
  idString: string;
  version: string;
  ownerId: number;
  schema: FormModel;
}

async function formFacts(client: pg.Client): Promise<FormFacts> {
  const row = (await client.query<{ id: number; id_string: string; version: string; owner_id: number; json: Record<string, unknown> }>(
    'SELECT id, id_string, version, owner_id, json FROM forms WHERE deleted_at IS NULL ORDER BY id LIMIT 1',
  )).rows[0];
  if (!row) throw new Error('the bench form is missing');
  return { id: row.id, idString: row.id_string, version: row.version, ownerId: row.owner_id, schema: buildFormModel(row.json) };
}

/** Publishes the bench form, posts a few submissions through HTTP and checks the loader writes the same. */
async function prepare(server: BenchServer, database: string): Promise<string> {
  const token = await createAccount(server.baseUrl, USERNAME);
  const auth = { authorization: `Token ${token}` };
  const boundary = '----gatherbenchform';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="xls_file"; filename="bench_household.xlsx"\r\nContent-Type: application/vnd.openxmlformats-officedocument.spreadsheetml.sheet\r\n\r\n`),
    readFileSync(BENCH_FORM),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const published = await fetch(`${server.baseUrl}/api/v1/forms`, { method: 'POST', headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
  if (published.status !== 201) throw new Error(`publishing the bench form failed: ${published.status} ${await published.text()}`);
  for (let n = 0; n < 5; n++) {
    const submission = submissionBody(benchInstance(n));
    const res = await fetch(`${server.baseUrl}/${USERNAME}/submission`, { method: 'POST', headers: { ...auth, 'content-type': submission.contentType }, body: submission.body });
    if (res.status !== 201) throw new Error(`submission failed: ${res.status} ${await res.text()}`);
  }
  await withClient(databaseUrl(database), async (client) => {
    const form = await formFacts(client);
    const stored = await client.query<{ xml: string; json: Record<string, unknown>; repeat_counts: unknown }>(
      'SELECT xml, json, repeat_counts FROM instances WHERE form_id = $1 ORDER BY id', [form.id]);
    for (const row of stored.rows) {
      const mine = storedRecord(row.xml, form.schema, form.idString, form.version);
      const same = (a: unknown, b: unknown) => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
      if (!same(JSON.parse(mine.json), row.json) || !same(JSON.parse(mine.repeatCounts), row.repeat_counts)) {
        throw new Error('the bench loader would store records unlike a submission does; update storedRecord() in bench/export.ts');
      }
    }
  });
  return token;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}

async function load(database: string, records: number): Promise<void> {
  await withClient(databaseUrl(database), async (client) => {
    const form = await formFacts(client);
    const have = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM instances WHERE form_id = $1', [form.id])).rows[0]?.n ?? 0);
    const started = performance.now();
    const base = Date.parse('2026-11-01T00:00:00Z');
    let lastReport = started;
    // Parsing (here) overlaps the previous batch's INSERT (in PostgreSQL, on the other core).
    let inFlight: Promise<unknown> = Promise.resolve();
    for (let n = have; n < records; n += BATCH) {
      const count = Math.min(BATCH, records - n);
      const uuids: string[] = [];
      const xmls: string[] = [];
      const jsons: string[] = [];
      const versions: string[] = [];
      const times: string[] = [];
      const geos: boolean[] = [];
      const repeatCounts: string[] = [];
      for (let i = 0; i < count; i++) {
        const xml = benchInstance(n + i);
        const stored = storedRecord(xml, form.schema, form.idString, form.version);
        uuids.push(stored.uuid);
        xmls.push(xml);
        jsons.push(stored.json);
        versions.push(stored.version);
        times.push(new Date(base + (n + i) * 1000).toISOString());
        geos.push(stored.hasGeopoint);
        repeatCounts.push(stored.repeatCounts);
      }
      await inFlight;
      inFlight = client.query(
        `INSERT INTO instances (form_id, uuid, xml, json, version, submitted_by, date_created, date_modified, total_media, has_geopoint, repeat_counts)
         SELECT $1, u, x, j::jsonb, v, $2, t::timestamptz, t::timestamptz, 0, g, c::jsonb
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::text[]) AS r(u, x, j, v, t, g, c)`,
        [form.id, form.ownerId, uuids, xmls, jsons, versions, times, geos, repeatCounts],
      );
      const now = performance.now();
      if (now - lastReport > 10_000) {
        const done = n + count - have;
        console.log(`  loaded ${n + count} of ${records} (${Math.round(done / ((now - started) / 1000))} records/s)`);
        lastReport = now;
      }
    }
    await inFlight;
    await client.query('DELETE FROM form_stats WHERE form_id = $1', [form.id]);
    await client.query(
      `INSERT INTO form_stats (form_id, shard, submissions, geopoints, last_submission_time)
       SELECT form_id, id % ${STAT_SHARDS}, count(*), count(*) FILTER (WHERE has_geopoint), max(date_created)
       FROM instances WHERE form_id = $1 AND deleted_at IS NULL GROUP BY 1, 2`,
      [form.id],
    );
    await client.query('VACUUM ANALYZE instances');
    await client.query('CREATE TABLE IF NOT EXISTS bench_export_meta (records integer NOT NULL)');
    await client.query('DELETE FROM bench_export_meta');
    await client.query('INSERT INTO bench_export_meta VALUES ($1)', [records]);
    console.log(`  loaded ${records - have} records in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
}

/**
 * Downloads `url` and counts its bytes, discarding them: node:http's plain stream, since the
 * client shares the 2 cores with the server and PostgreSQL. By hand, per CSV of 1,000,000
 * records, fetch's web streams cost the client 1.5-1.7 s of CPU, node:http 1.0-1.2 s, curl 0.6 s.
 */
function download(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      let bytes = 0;
      let text = '';
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.byteLength;
        if (response.statusCode !== 200 && text.length < 2000) text += chunk.toString('utf8');
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes, text }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

interface Measurement {
  format: string;
  mode: string;
  seconds: number;
  cpu: number;
  megabytes: number;
  peakMb: number;
}

async function measureDirect(server: BenchServer, auth: Record<string, string>, formId: number, format: string): Promise<Measurement> {
  const pid = server.process.pid ?? 0;
  resetPeakRss(pid);
  const cpu = cpuSeconds(pid);
  const started = performance.now();
  const response = await download(`${server.baseUrl}/api/v1/forms/${formId}.${format}`, auth);
  if (response.status !== 200) throw new Error(`${format} download: ${response.status} ${response.text}`);
  const bytes = response.bytes;
  return { format, mode: 'download', seconds: (performance.now() - started) / 1000, cpu: cpuSeconds(pid) - cpu, megabytes: bytes / 1e6, peakMb: peakRssMb(pid) };
}

async function measureJob(server: BenchServer, auth: Record<string, string>, formId: number, format: string): Promise<Measurement> {
  const pid = server.process.pid ?? 0;
  resetPeakRss(pid);
  const cpu = cpuSeconds(pid);
  const started = performance.now();
  const url = `${server.baseUrl}/api/v1/forms/${formId}/export_async?format=${format}`;
  const first = await fetch(url, { headers: auth });
  const start = (await first.json()) as { job_uuid?: string; export_url?: string };
  let exportUrl = start.export_url;
  while (!exportUrl) {
    await new Promise((r) => setTimeout(r, 250));
    const poll = (await (await fetch(`${url.split('?')[0]}?job_uuid=${start.job_uuid ?? ''}`, { headers: auth })).json()) as Record<string, unknown>;
    if (poll['job_status'] === 'FAILURE') throw new Error(`${format} job failed: ${JSON.stringify(poll)}`);
    if (typeof poll['export_url'] === 'string') exportUrl = poll['export_url'];
  }
  const seconds = (performance.now() - started) / 1000;
  const used = cpuSeconds(pid) - cpu;
  const peakMb = peakRssMb(pid);
  const file = await download(exportUrl, auth);
  if (file.status !== 200) throw new Error(`${format} export file: ${file.status} ${file.text}`);
  const bytes = file.bytes;
  return { format, mode: 'job', seconds, cpu: used, megabytes: bytes / 1e6, peakMb };
}

export async function main(args: string[]): Promise<void> {
  const records = Number(args[0] ?? 1_000_000) || 1_000_000;
  // `npm run bench -- export 1000000 csv xlsx`: only the formats named.
  const named = args.slice(1).filter((a): a is (typeof FORMATS)[number] => (FORMATS as readonly string[]).includes(a));
  const formats = named.length ? named : FORMATS;
  if (!(await postgresAvailable())) {
    console.log(`export bench skipped: no PostgreSQL at ${POSTGRES_SERVER} (set BENCH_POSTGRES)`);
    return;
  }
  const database = databaseFor(records);
  const kept = await keptRecords(database);
  const fresh = kept !== records;
  if (fresh) {
    await withClient(POSTGRES_SERVER, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${database}`);
    });
  }
  console.log(`export bench: ${records.toLocaleString('en')} records of the bench form on PostgreSQL (${fresh ? 'loading' : 'reusing'} ${database})`);
  let server = await startBenchServer(database);
  try {
    if (fresh) {
      await prepare(server, database);
      await server.stop();
      await load(database, records);
      server = await startBenchServer(database);
    }
    // Tokens survive restarts; the account's password is the bench default.
    const login = await fetch(`${server.baseUrl}/api/v1/user`, {
      headers: { authorization: `Basic ${Buffer.from(`${USERNAME}:Bench-${USERNAME}-pw-42`).toString('base64')}` },
    });
    const auth = { authorization: `Token ${((await login.json()) as { api_token: string }).api_token}` };
    const formId = await withClient(databaseUrl(database), async (c) => {
      // Earlier runs' exports would be reused (their files are gone with the old DATA_DIR).
      await c.query('DELETE FROM exports');
      return (await formFacts(c)).id;
    });
    const idle = peakRssMb(server.process.pid ?? 0);
    const checkBefore = machineCheckMs();
    const results: Measurement[] = [];
    for (const format of formats) {
      for (const measure of [measureDirect, measureJob]) {
        const result = await measure(server, auth, formId, format);
        console.log(`  ${result.format} ${result.mode}: ${result.seconds.toFixed(1)} s (server CPU ${result.cpu.toFixed(1)} s), peak RSS ${result.peakMb} MB`);
        results.push(result);
      }
    }
    console.log(`server RSS after start: ${idle} MB; peak RSS per run (VmHWM, reset before each run${resetPeakRss(server.process.pid ?? 0) ? '' : ' — reset unsupported, so cumulative'})`);
    printTable(
      ['format', 'mode', 'seconds', 'server CPU s', 'MB', 'records/s', 'peak RSS MB'],
      results.map((r) => [r.format, r.mode, r.seconds.toFixed(1), r.cpu.toFixed(1), r.megabytes.toFixed(1), Math.round(records / r.seconds), r.peakMb]),
    );
    console.log('targets: CSV ≤ 15 s, XLSX ≤ 60 s, peak RSS ≤ 300 MB');
    console.log(`machine load average during the run: ${loadAverage()} (server CPU s is the figure to compare when the machine is busy)`);
    console.log(`machine check (JSON.parse of a record ×1,000,000, lower is faster): ${checkBefore} ms before the runs, ${machineCheckMs()} ms after`);
  } finally {
    await server.stop();
  }
}
