// `npm run bench -- restservices [count] [--pglite] [--node-options FLAGS]`: OpenRosa ingest of
// the bench form at concurrency 32 without a REST service, then (on a fresh server) with one
// generic_json service pointing at a local receiver: submissions/s both ways, server and database
// CPU per submission, and the delay from each submission's 201 to its record reaching the receiver
// (p50/p99). Targets (issue 22): ingest within 15% of the run without the service, p99 delay
// ≤ 2 s. `--rounds=N` runs the pair N times, alternated, and prints each round's ratio and their
// median: a fresh server's rate alone moves by a fifth or more from one start to the next. Then, with the service, 100 submissions one at a time: the delay when the dispatcher is
// idle and must be woken.
// On PostgreSQL it also times the claim a worker makes with 70,000 retries waiting: in the jobs
// table (one job per record, in back-off) against the REST service queue (one service in back-off).
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import pg from 'pg';
import { createAccount, postgresAvailable, printTable, startServer, type Backend } from './_server.ts';
import { benchInstance, submissionBody, publishBenchForm } from './_instances.ts';
import { cpuSeconds, loadAverage, machineCheckMs } from './_proc.ts';
import { backendCpu, backendCpuUsed, serverDatabase } from './ingest.ts';

const CONCURRENCY = 32;


/** The receiver: when each record (by instanceID) first arrived, and how many deliveries came. */
async function startReceiver(): Promise<{ url: string; arrivals: Map<string, number>; deliveries: () => number; close: () => void }> {
  const arrivals = new Map<string, number>();
  let deliveries = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      deliveries++;
      const uuid = /"_uuid":\s*"([^"]+)"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
      if (uuid && !arrivals.has(uuid)) arrivals.set(uuid, at);
      res.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    deliveries: () => deliveries,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

async function ingest(baseUrl: string, token: string, total: number, acks: Map<string, number>) {
  const pool = new Pool(baseUrl, { connections: CONCURRENCY, pipelining: 1 });
  let next = 0;
  let ok = 0;
  let failures = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < total) {
      const n = next++;
      const uuid = crypto.randomUUID();
      const { body, contentType } = submissionBody(benchInstance(n, `uuid:${uuid}`));
      const res = await pool.request({ method: 'POST', path: '/benchuser/submission', headers: { 'content-type': contentType, authorization: `Token ${token}`, 'x-openrosa-version': '1.0' }, body });
      await res.body.dump();
      if (res.statusCode === 201) {
        ok++;
        acks.set(uuid, performance.now());
      } else failures++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { ok, failures, seconds, rate: ok / seconds };
}

const TRICKLE = 100;
const TRICKLE_GAP_MS = 100;

/** Submissions one at a time with a pause between them: the delay when the dispatcher is idle. */
async function trickle(baseUrl: string, token: string, arrivals: Map<string, number>): Promise<{ p50: number; p99: number; max: number }> {
  const acks = new Map<string, number>();
  for (let n = 0; n < TRICKLE; n++) {
    await new Promise((r) => setTimeout(r, TRICKLE_GAP_MS));
    const uuid = crypto.randomUUID();
    const { body, contentType } = submissionBody(benchInstance(n, `uuid:${uuid}`));
    const res = await fetch(`${baseUrl}/benchuser/submission`, { method: 'POST', headers: { 'content-type': contentType, authorization: `Token ${token}`, 'x-openrosa-version': '1.0' }, body });
    await res.arrayBuffer();
    if (res.status === 201) acks.set(uuid, performance.now());
  }
  const deadline = performance.now() + 30_000;
  while ([...acks.keys()].some((uuid) => !arrivals.has(uuid)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const delays = [...acks].map(([uuid, at]) => (arrivals.get(uuid) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b);
  return { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays[delays.length - 1] ?? Number.NaN };
}

function serverDatabaseUrl(pid: number): string | undefined {
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return environ.find((v) => v.startsWith('DATABASE_URL='))?.slice('DATABASE_URL='.length);
}

async function medianMs(client: pg.Client, text: string, runs = 15): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    await client.query('BEGIN');
    const t0 = performance.now();
    await client.query(text);
    times.push(performance.now() - t0);
    await client.query('ROLLBACK');
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

/** The claim with 70,000 retries waiting, one job per record against one service in back-off. */
async function claimWithBacklog(databaseUrl: string, formId: number): Promise<{ jobsMs: number; servicesMs: number; emptyJobsMs: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const jobClaim = `SELECT id FROM jobs WHERE status IN ('PENDING', 'STARTED')
      AND ((status = 'PENDING' AND run_after <= now()) OR (status = 'STARTED' AND locked_until < now()))
      ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`;
    const serviceClaim = `SELECT c.id FROM rest_services c JOIN forms f ON f.id = c.form_id AND f.deleted_at IS NULL
      WHERE (c.retry_after IS NULL OR c.retry_after <= now()) AND (c.locked_until IS NULL OR c.locked_until < now())
        AND (SELECT o.id FROM rest_service_outbox o WHERE o.service_id = c.id ORDER BY o.id LIMIT 1) IS NOT NULL
      ORDER BY c.last_attempt_at NULLS FIRST, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED`;
    const emptyJobsMs = await medianMs(client, jobClaim);
    await client.query(`INSERT INTO jobs (uuid, type, payload, status, attempts, run_after, error)
      SELECT gen_random_uuid(), 'rest_delivery', jsonb_build_object('n', n), 'PENDING', 3, now() + interval '1 hour', 'The service answered 503.'
      FROM generate_series(1, 70000) n`);
    await client.query(`INSERT INTO rest_services (form_id, name, service_url, attempts, retry_after) VALUES ($1, 'generic_json', 'https://dead.example.org/hook', 3, now() + interval '1 hour')`, [formId]);
    await client.query(`INSERT INTO rest_service_outbox (service_id, instance_id, event)
      SELECT (SELECT max(id) FROM rest_services), n, 'created' FROM generate_series(1, 70000) n`);
    await client.query('ANALYZE jobs; ANALYZE rest_services; ANALYZE rest_service_outbox');
    // A due export behind the backlog: what the claim must find.
    await client.query(`INSERT INTO jobs (uuid, type, payload) VALUES (gen_random_uuid(), 'export_async', 'null'::jsonb)`);
    return { jobsMs: await medianMs(client, jobClaim), servicesMs: await medianMs(client, serviceClaim), emptyJobsMs };
  } finally {
    await client.end();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function main(args: string[]): Promise<void> {
  const total = Number(args.find((a) => /^\d+$/.test(a)) ?? 10_000);
  // `--node-options '--cpu-prof --cpu-prof-dir=/tmp/prof'`: flags for the server's node (on its
  // command line: NODE_OPTIONS refuses --cpu-prof).
  const nodeOptionsIndex = args.indexOf('--node-options');
  const serverNodeArgs = nodeOptionsIndex >= 0 ? (args[nodeOptionsIndex + 1] ?? '').split(/\s+/).filter((a) => a !== '') : [];
  const roundsArg = args.find((a) => a.startsWith('--rounds='));
  const rounds = Math.max(1, Number(roundsArg?.slice('--rounds='.length)) || 1);
  const ratios: string[] = [];
  const backends: Backend[] = [];
  if (await postgresAvailable()) backends.push('postgres');
  if (args.includes('--pglite') || backends.length === 0) backends.push('pglite');
  const rows: Array<Array<string | number>> = [];
  const loads: string[] = [];
  const claims: string[] = [];
  const trickles: string[] = [];
  let port = 18_900;
  const checkBefore = machineCheckMs();
  for (const backend of backends) {
    const perRound: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      let rateWithout = Number.NaN;
      for (const withService of [false, true]) {
        const receiver = await startReceiver();
        const server = await startServer(backend, port++, { ALLOW_PRIVATE_URLS: 'true' }, serverNodeArgs);
        try {
          const pid = server.process.pid ?? 0;
          const token = await createAccount(server.baseUrl, 'benchuser');
          const formId = await publishBenchForm(server.baseUrl, `Token ${token}`);
          if (withService) {
            const res = await fetch(`${server.baseUrl}/api/v1/restservices`, {
              method: 'POST',
              headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify({ xform: formId, name: 'generic_json', service_url: receiver.url }),
            });
            if (res.status !== 201) throw new Error(`service not created: ${res.status} ${await res.text()}`);
          }
          const acks = new Map<string, number>();
          const database = serverDatabase(pid);
          const dbBefore = await backendCpu(database);
          const cpuBefore = cpuSeconds(pid);
          const r = await ingest(server.baseUrl, token, total, acks);
          let delays: number[] = [];
          if (withService) {
            const deadline = performance.now() + 120_000;
            while (receiver.arrivals.size < r.ok && performance.now() < deadline) await new Promise((res) => setTimeout(res, 50));
            delays = [...acks].map(([uuid, at]) => (receiver.arrivals.get(uuid) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b);
          }
          // Server CPU over the ingest and, with the service, until the last delivery.
          const serverMs = (cpuSeconds(pid) - cpuBefore) * 1000;
          const dbMs = backendCpuUsed(dbBefore, await backendCpu(database));
          const received = receiver.arrivals.size;
          const deliveries = receiver.deliveries();
          if (withService) perRound.push(r.rate / rateWithout);
          else rateWithout = r.rate;
          if (withService && round === 1) {
            const t = await trickle(server.baseUrl, token, receiver.arrivals);
            trickles.push(`${backend}: ${TRICKLE} submissions one at a time, ${TRICKLE_GAP_MS} ms apart: ack→delivery p50 ${t.p50.toFixed(0)} ms, p99 ${t.p99.toFixed(0)} ms, max ${t.max.toFixed(0)} ms`);
          }
          loads.push(`${backend} ${withService ? 'with' : 'without'}: ${loadAverage()}`);
          rows.push([
            backend, round, withService ? 'generic_json' : 'none', CONCURRENCY, total, r.ok, r.failures, r.seconds.toFixed(1), Math.round(r.rate),
            (serverMs / total).toFixed(3), database ? (dbMs / total).toFixed(3) : '-',
            withService ? received : '-', withService ? deliveries : '-',
            withService ? percentile(delays, 50).toFixed(0) : '-', withService ? percentile(delays, 99).toFixed(0) : '-',
          ]);
          const databaseUrl = serverDatabaseUrl(pid);
          if (withService && databaseUrl && round === 1) {
            const c = await claimWithBacklog(databaseUrl, formId);
            claims.push(`${backend}: jobs-table claim ${c.emptyJobsMs.toFixed(2)} ms with no backlog, ${c.jobsMs.toFixed(2)} ms with 70,000 jobs in back-off; REST service claim with 70,000 queued records of a service in back-off ${c.servicesMs.toFixed(2)} ms`);
          }
        } finally {
          await server.stop();
          receiver.close();
        }
      }
    }
    const sorted = [...perRound].sort((a, b) => a - b);
    const median = sorted.length % 2 === 1 ? (sorted[(sorted.length - 1) / 2] ?? Number.NaN) : ((sorted[sorted.length / 2 - 1] ?? Number.NaN) + (sorted[sorted.length / 2] ?? Number.NaN)) / 2;
    ratios.push(`${backend}: rate with the service / without, by round: ${perRound.map((x) => x.toFixed(2)).join(', ')}; median ${median.toFixed(2)} (target ≥ 0.85)`);
  }
  console.log(`\nrestservices: OpenRosa ingest of bench_household at concurrency ${CONCURRENCY}, ${total} per row, without and with one generic_json service (local receiver)\n`);
  printTable(
    ['backend', 'round', 'service', 'concurrency', 'sent', '201s', 'failures', 'seconds', 'subs/s', 'server CPU ms/sub', 'database CPU ms/sub', 'records received', 'deliveries', 'ack→delivery p50 ms', 'p99 ms'],
    rows,
  );
  console.log(`\nserver and database CPU ms/sub include, with the service, the deliveries until the last one arrived.`);
  for (const line of ratios) console.log(line);
  console.log('\nLow load (an idle dispatcher, woken by the queued record rather than at its next 250 ms look):');
  for (const line of trickles) console.log(line);
  for (const line of claims) console.log(line);
  console.log(`load average at the end of each row: ${loads.join('; ')}`);
  console.log(`machine check: ${checkBefore} ms before the runs, ${machineCheckMs()} ms after`);
}
