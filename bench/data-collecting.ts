// `npm run bench -- data-collecting [records] [seconds] [--fresh]`: the data API on a form that is
// collecting, on PostgreSQL, with 100,000 records of the bench form.
//   1. `query` + `sort` pages of 100 while one submission arrives every 100 ms
//      (target, issue 24: p99 ≤ 50 ms per page);
//   2. every record in one response, and then through pages of 10,000
//      (targets: peak RSS ≤ 300 MB answering all in one; all pages ≤ 2 s).
// The server's CPU per unit of work is printed beside wall time: the machine is shared.
import pg from 'pg';
import { fetch as undiciFetch, Pool } from 'undici';
import { createAccount, percentile, POSTGRES_SERVER, postgresAvailable, printTable, startServer } from './_server.ts';
import { benchInstance, submissionBody, keptBenchForm } from './_instances.ts';
import { cpuSeconds, loadAverage, machineCheckMs, peakRssMb, resetPeakRss } from './_proc.ts';

const DATABASE = 'gather_bench_data_collecting';
/** The briefcase bench's database is copied when there is one; its tokens are sealed under its key. */
const SECRET_KEY = 'gather-bench-gather_bench_briefcase';

async function copyLoadedDatabase(fresh: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER });
  await client.connect();
  try {
    if (fresh) await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    if ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])).rowCount) return;
    if (!(await client.query("SELECT 1 FROM pg_database WHERE datname = 'gather_bench_briefcase'")).rowCount) return;
    await client.query(`CREATE DATABASE ${DATABASE} TEMPLATE gather_bench_briefcase`).catch(() => undefined); // in use: seed instead
  } finally {
    await client.end();
  }
}


async function submit(pool: Pool, token: string, n: number): Promise<void> {
  const { body, contentType } = submissionBody(benchInstance(n));
  const headers = { 'content-type': contentType, authorization: `Token ${token}` };
  const res = await pool.request({ method: 'POST', path: '/benchuser/submission', headers, body });
  await res.body.dump();
  if (res.statusCode !== 201) throw new Error(`submission failed: ${res.statusCode}`);
}

interface Phase {
  latencies: Float64Array;
  cpuMs: number;
}

/** Reads pages of a query for `seconds`, cycling through its pages; `collecting`: a submission every 100 ms meanwhile. */
async function readPages(baseUrl: string, token: string, pid: number, path: (page: number) => string, seconds: number, collecting: { next: number } | undefined): Promise<Phase & { submitted: number }> {
  const reader = new Pool(baseUrl, { connections: 1 });
  const writer = new Pool(baseUrl, { connections: 1 });
  const headers = { authorization: `Token ${token}` };
  const get = async (page: number): Promise<{ ms: number; last: number }> => {
    const t0 = performance.now();
    const res = await reader.request({ method: 'GET', path: path(page), headers });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`page ${page}: ${res.statusCode}`);
    const last = Number(/page=(\d+)&page_size=\d+>; rel="last"/.exec(String(res.headers['link'] ?? ''))?.[1] ?? page);
    return { ms: performance.now() - t0, last };
  };
  let submitted = 0;
  let stop = false;
  const submitting = collecting
    ? (async () => {
        while (!stop) {
          const due = performance.now() + 100;
          await submit(writer, token, collecting.next++);
          submitted += 1;
          await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
        }
      })()
    : Promise.resolve();
  let { last } = await get(1); // the list is made (or brought up to date) here
  const latencies: number[] = [];
  const cpu0 = cpuSeconds(pid);
  const stopAt = performance.now() + seconds * 1000;
  let page = 1;
  while (performance.now() < stopAt) {
    page = (page % last) + 1;
    const result = await get(page);
    latencies.push(result.ms);
    last = Math.max(1, result.last);
  }
  const cpuMs = ((cpuSeconds(pid) - cpu0) * 1000) / latencies.length;
  stop = true;
  await submitting;
  await Promise.all([reader.close(), writer.close()]);
  return { latencies: Float64Array.from(latencies).sort(), cpuMs, submitted };
}

/** Reads every response of `paths` to the end, keeping none of it: seconds, MB received, the server's peak RSS and CPU. */
async function readAll(baseUrl: string, token: string, pid: number, paths: string[]): Promise<{ seconds: number; mb: number; beforeMb: number; peakMb: number; cpuS: number }> {
  resetPeakRss(pid);
  const beforeMb = peakRssMb(pid);
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  let bytes = 0;
  for (const path of paths) {
    const res = await undiciFetch(`${baseUrl}${path}`, { headers: { authorization: `Token ${token}` } });
    if (res.status !== 200 || !res.body) throw new Error(`${path}: ${res.status}`);
    for await (const chunk of res.body) bytes += (chunk as Uint8Array).byteLength;
  }
  return { seconds: (performance.now() - t0) / 1000, mb: bytes / 1e6, beforeMb, peakMb: peakRssMb(pid), cpuS: cpuSeconds(pid) - cpu0 };
}

export async function main(args: string[]): Promise<void> {
  const positional = args.filter((a) => !a.startsWith('--'));
  const records = Number(positional[0] ?? 100_000);
  const seconds = Number(positional[1] ?? 20);
  if (!(await postgresAvailable())) {
    console.log('data-collecting: PostgreSQL is not reachable; this benchmark needs it');
    return;
  }
  await copyLoadedDatabase(args.includes('--fresh'));
  const server = await startServer('postgres', 19_240, { WORKERS: '0', SECRET_KEY }, [], { keepDatabase: DATABASE });
  const pid = server.process.pid ?? 0;
  try {
    const token = await createAccount(server.baseUrl, 'benchuser', { mayExist: true });
    const headers = { authorization: `Token ${token}` };
    const { formId, stored } = await keptBenchForm(server.baseUrl, headers.authorization);
    const counter = { next: stored };
    if (stored < records) {
      const pool = new Pool(server.baseUrl, { connections: 16 });
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (counter.next < records) await submit(pool, token, counter.next++);
      }));
      await pool.close();
    }
    // A copied or just-loaded database has no planner statistics yet; a server that has been
    // collecting for a while has had them from autovacuum.
    const url = new URL(POSTGRES_SERVER);
    url.pathname = `/${DATABASE}`;
    const analyze = new pg.Client({ connectionString: url.toString() });
    await analyze.connect();
    await analyze.query('ANALYZE instances');
    await analyze.end();
    const machine = machineCheckMs();
    const load = loadAverage();

    const query = encodeURIComponent(JSON.stringify({ 'respondent/resp_gender': 'female', 'household/hh_size': { $gte: 3 } }));
    const byTime = encodeURIComponent(JSON.stringify({ _submission_time: -1 }));
    const byAnswer = encodeURIComponent(JSON.stringify({ 'respondent/resp_age': 1 }));
    const page = (sort: string) => (n: number) => `/api/v1/data/${formId}?query=${query}&sort=${sort}&page=${n}&page_size=100`;
    const rows: Array<Array<string | number>> = [];
    const pageRow = (label: string, phase: Phase & { submitted: number }, target: string): void => {
      rows.push([label, phase.latencies.length, phase.submitted, percentile(phase.latencies, 50).toFixed(1), percentile(phase.latencies, 99).toFixed(1), phase.cpuMs.toFixed(2), target]);
    };
    pageRow('query + sort by _submission_time, quiet', await readPages(server.baseUrl, token, pid, page(byTime), Math.min(seconds, 5), undefined), '');
    pageRow('query + sort by _submission_time, collecting', await readPages(server.baseUrl, token, pid, page(byTime), seconds, counter), 'p99 ≤ 50 ms');
    pageRow('query + sort by an answer, collecting', await readPages(server.baseUrl, token, pid, page(byAnswer), Math.min(seconds, 5), counter), '');

    const total = counter.next;
    const one = await readAll(server.baseUrl, token, pid, [`/api/v1/data/${formId}`]);
    const paths = Array.from({ length: Math.ceil(total / 10_000) }, (_, n) => `/api/v1/data/${formId}?page=${n + 1}&page_size=10000`);
    const paged = await readAll(server.baseUrl, token, pid, paths);

    console.log(`\ndata-collecting: ${total} records of bench_household on PostgreSQL (${DATABASE}); machine check ${machine} ms, load ${load}\n`);
    printTable(['pages of 100 matching a query', 'pages read', 'submissions meanwhile', 'p50 ms', 'p99 ms', 'server CPU ms/page', 'target'], rows);
    console.log('');
    printTable(
      ['listing', 'seconds', 'MB', 'server RSS before / peak MB', 'server CPU µs/record', 'target'],
      [
        ['all records, one response', one.seconds.toFixed(2), one.mb.toFixed(0), `${one.beforeMb} / ${one.peakMb}`, ((one.cpuS * 1e6) / total).toFixed(1), 'peak ≤ 300 MB'],
        ['all records, pages of 10,000', paged.seconds.toFixed(2), paged.mb.toFixed(0), `${paged.beforeMb} / ${paged.peakMb}`, ((paged.cpuS * 1e6) / total).toFixed(1), '≤ 2 s'],
      ],
    );
  } finally {
    await server.stop();
  }
}
