// `npm run bench -- briefcase [records] [--fresh]`: pages through a form's records with
// submissionList as ODK Briefcase does (numEntries=100, each page's resumptionCursor into the
// next), over `records` (default 100,000) submissions of the bench form on PostgreSQL, and prints
// ms per page for the first and last pages, the total, and the server's CPU per page.
// Target (issue 21): the last pages cost what the first do (keyset paging, no OFFSET).
import { Pool } from 'undici';
import { createAccount, postgresAvailable, printTable, startServer } from './_server.ts';
import { benchInstance, submissionBody, keptBenchForm } from './_instances.ts';
import { cpuSeconds, loadAverage, machineCheckMs } from './_proc.ts';

const PAGE = 100;


const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

export async function main(args: string[]): Promise<void> {
  const records = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
  if (!(await postgresAvailable())) {
    console.log('briefcase: PostgreSQL is not reachable; this benchmark needs it');
    return;
  }
  // The loaded database is kept between runs (`--fresh` starts over): loading through /submission takes minutes.
  const fresh = args.includes('--fresh');
  const database = 'gather_bench_briefcase';
  const server = await startServer('postgres', 19_170, { WORKERS: '0' }, [], fresh ? {} : { keepDatabase: database });
  try {
    const token = await createAccount(server.baseUrl, 'benchuser', { mayExist: true });
    const headers = { authorization: `Token ${token}` };
    const { stored } = await keptBenchForm(server.baseUrl, headers.authorization);
    const pool = new Pool(server.baseUrl, { connections: 16 });
    const loadStart = performance.now();
    let next = stored;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < records) {
          const { body, contentType } = submissionBody(benchInstance(next++));
          const res = await pool.request({ method: 'POST', path: '/benchuser/submission', headers: { 'content-type': contentType, ...headers }, body });
          await res.body.dump();
          if (res.statusCode !== 201) throw new Error(`submission failed: ${res.statusCode}`);
        }
      }),
    );
    const loadSeconds = (performance.now() - loadStart) / 1000;
    await pool.close();

    const check = machineCheckMs();
    const reader = new Pool(server.baseUrl, { connections: 1 });
    const pageMs: number[] = [];
    let cursor = '';
    let ids = 0;
    const pid = server.process.pid ?? 0;
    const cpuBefore = cpuSeconds(pid);
    const started = performance.now();
    for (;;) {
      const t0 = performance.now();
      const res = await reader.request({
        method: 'GET',
        path: `/benchuser/view/submissionList?formId=bench_household&cursor=${encodeURIComponent(cursor)}&numEntries=${PAGE}&includeIncomplete=true`,
        headers,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`submissionList: ${res.statusCode} ${text.slice(0, 200)}`);
      pageMs.push(performance.now() - t0);
      const count = text.split('<id>').length - 1;
      if (count === 0) break;
      ids += count;
      cursor = /<resumptionCursor>([^<]*)<\/resumptionCursor>/.exec(text)?.[1] ?? '';
    }
    const totalMs = performance.now() - started;
    const cpuMs = ((cpuSeconds(pid) - cpuBefore) * 1000) / pageMs.length;
    await reader.close();
    const first = pageMs.slice(0, 10);
    const last = pageMs.slice(-11, -1);
    const total = Math.max(records, stored);
    console.log(
      `\nbriefcase: ${total} records (${Math.max(0, records - stored)} loaded through /submission in ${loadSeconds.toFixed(1)} s, the rest kept in ${fresh ? 'a fresh database' : database});` +
        ` submissionList pages of ${PAGE} by cursor, one client; machine check ${check} ms, load ${loadAverage()}\n`,
    );
    printTable(
      ['backend', 'ids listed', 'pages', 'first 10 pages, ms/page', 'last 10 pages, ms/page', 'total s', 'server CPU ms/page'],
      [['postgres', ids, pageMs.length, mean(first).toFixed(2), mean(last).toFixed(2), (totalMs / 1000).toFixed(2), cpuMs.toFixed(2)]],
    );
  } finally {
    await server.stop();
  }
}
