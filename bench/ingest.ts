// `npm run bench -- ingest [count]`: OpenRosa multipart submissions of the bench form at
// concurrency 8 and 32 on PostgreSQL (and PGlite), printing submissions/s, p50/p99 and the count
// stored. Target (issue 5): ≥ 2,000/s at concurrency 32, stored count = sent count.
// The machine is often shared, so it also prints the CPU milliseconds each submission cost the
// server's processes and the database's backends: a figure that other load barely moves.
//   npm run bench -- ingest [count] [--pglite] [--processes N]   (N: the server's WEB_PROCESSES)
import { readdirSync, readFileSync } from 'node:fs';
import { Pool } from 'undici';
import pg from 'pg';
import { createAccount, POSTGRES_SERVER, postgresAvailable, printTable, startServer, type Backend } from './_server.ts';
import { BENCH_FORM, benchInstance, submissionBody } from './_instances.ts';
import { cpuSeconds, loadAverage } from './_proc.ts';

async function publishBenchForm(baseUrl: string, token: string): Promise<number> {
  const boundary = '----benchform';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="xls_file"; filename="bench_household.xlsx"\r\nContent-Type: application/vnd.openxmlformats-officedocument.spreadsheetml.sheet\r\n\r\n`),
    readFileSync(BENCH_FORM),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await fetch(`${baseUrl}/api/v1/forms`, { method: 'POST', headers: { authorization: `Token ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
  if (res.status !== 201) throw new Error(`publish failed ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { formid: number }).formid;
}

/** CPU milliseconds of a process and all its descendants (the cluster's workers). */
function treeCpuMs(root: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(entry));
      children.set(parent, list);
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  const pending = [root];
  while (pending.length) {
    const pid = pending.pop() as number;
    total += cpuSeconds(pid) * 1000;
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** The server's PostgreSQL database, read from its environment (unset on PGlite). */
export function serverDatabase(pid: number): string | undefined {
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const url = environ.find((v) => v.startsWith('DATABASE_URL='))?.slice('DATABASE_URL='.length);
  return url ? decodeURIComponent(new URL(url).pathname.slice(1)) : undefined;
}

/** CPU milliseconds per backend pid of the database (backends of the local server only). */
export async function backendCpu(database: string | undefined): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  if (!database) return cpu;
  const client = new pg.Client({ connectionString: POSTGRES_SERVER });
  await client.connect();
  try {
    const result = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
    for (const row of result.rows) cpu.set(row.pid, cpuSeconds(row.pid) * 1000);
  } finally {
    await client.end();
  }
  return cpu;
}

/** Backend CPU used between two snapshots; backends that appeared meanwhile count in full. */
export function backendCpuUsed(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

async function ingest(baseUrl: string, token: string, total: number, concurrency: number, offset: number) {
  const pool = new Pool(baseUrl, { connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < total) {
      const n = offset + next++;
      const { body, contentType } = submissionBody(benchInstance(n));
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path: '/benchuser/submission', headers: { 'content-type': contentType, authorization: `Token ${token}`, 'x-openrosa-version': '1.0' }, body });
      await res.body.dump();
      if (res.statusCode === 201) latencies.push(performance.now() - t0);
      else failures++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? Number.NaN;
  return { ok: latencies.length, failures, seconds, rate: latencies.length / seconds, p50: at(50), p99: at(99) };
}

export async function main(args: string[]): Promise<void> {
  const flag = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : args[at + 1];
  };
  const processes = flag('--processes');
  const total = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--processes') ?? 20_000);
  const backends: Backend[] = [];
  if (await postgresAvailable()) backends.push('postgres');
  if (args.includes('--pglite') || backends.length === 0) backends.push('pglite');
  const rows: Array<Array<string | number>> = [];
  const loads: string[] = [];
  let port = 18_800;
  for (const backend of backends) {
    const env: Record<string, string> = { WORKERS: '0' };
    if (processes && backend === 'postgres') env['WEB_PROCESSES'] = processes;
    const server = await startServer(backend, port++, env);
    try {
      const pid = server.process.pid ?? 0;
      const database = serverDatabase(pid);
      const token = await createAccount(server.baseUrl, 'benchuser');
      const formId = await publishBenchForm(server.baseUrl, token);
      let sent = 0;
      for (const concurrency of [8, 32]) {
        const serverBefore = treeCpuMs(pid);
        const dbBefore = await backendCpu(database);
        const r = await ingest(server.baseUrl, token, total, concurrency, sent);
        const serverMs = treeCpuMs(pid) - serverBefore;
        const dbMs = backendCpuUsed(dbBefore, await backendCpu(database));
        loads.push(`${backend} @${concurrency}: ${loadAverage()}`);
        sent += total;
        const form = (await (await fetch(`${server.baseUrl}/api/v1/forms/${formId}`, { headers: { authorization: `Token ${token}` } })).json()) as { num_of_submissions: number };
        rows.push([
          backend, processes ?? '1', concurrency, total, r.ok, r.failures, r.seconds.toFixed(1), Math.round(r.rate), r.p50.toFixed(1), r.p99.toFixed(1),
          (serverMs / total).toFixed(3), database ? (dbMs / total).toFixed(3) : '-', form.num_of_submissions, sent,
        ]);
      }
    } finally {
      await server.stop();
    }
  }
  console.log(`\ningest: OpenRosa multipart submissions of bench_household (30 fields, a group, a repeat of 3), ${total} per row\n`);
  printTable(
    ['backend', 'processes', 'concurrency', 'sent', '201s', 'failures', 'seconds', 'subs/s', 'p50 ms', 'p99 ms', 'server CPU ms/sub', 'db CPU ms/sub', 'stored (form total)', 'sent (total)'],
    rows,
  );
  console.log(`\nload average at the end of each row: ${loads.join('; ')}`);
  console.log('CPU ms/sub: user+system time of the server process (and its workers) and of the database backends, per submission; compare these on a busy machine.');
}
