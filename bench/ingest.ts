// `npm run bench -- ingest [count]`: OpenRosa multipart submissions of the bench form at
// concurrency 8 and 32 on PostgreSQL (and PGlite), printing submissions/s, p50/p99 and the count
// stored. Target (issue 5): ≥ 2,000/s at concurrency 32, stored count = sent count.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { createAccount, postgresAvailable, printTable, startServer, type Backend } from './_server.ts';
import { BENCH_FORM, benchInstance, submissionBody } from './_instances.ts';

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
  const total = Number(args[0] ?? 20_000);
  const backends: Backend[] = [];
  if (await postgresAvailable()) backends.push('postgres');
  if (args.includes('--pglite') || backends.length === 0) backends.push('pglite');
  const rows: Array<Array<string | number>> = [];
  let port = 18_800;
  for (const backend of backends) {
    const server = await startServer(backend, port++, { WORKERS: '0' });
    try {
      const token = await createAccount(server.baseUrl, 'benchuser');
      const formId = await publishBenchForm(server.baseUrl, token);
      let sent = 0;
      for (const concurrency of [8, 32]) {
        const r = await ingest(server.baseUrl, token, total, concurrency, sent);
        sent += total;
        const form = (await (await fetch(`${server.baseUrl}/api/v1/forms/${formId}`, { headers: { authorization: `Token ${token}` } })).json()) as { num_of_submissions: number };
        rows.push([backend, concurrency, total, r.ok, r.failures, r.seconds.toFixed(1), Math.round(r.rate), r.p50.toFixed(1), r.p99.toFixed(1), form.num_of_submissions, sent]);
      }
    } finally {
      await server.stop();
    }
  }
  console.log(`\ningest: OpenRosa multipart submissions of bench_household (30 fields, a group, a repeat of 3), ${total} per row\n`);
  printTable(['backend', 'concurrency', 'sent', '201s', 'failures', 'seconds', 'subs/s', 'p50 ms', 'p99 ms', 'stored (form total)', 'sent (total)'], rows);
}
