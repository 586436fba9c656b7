// `npm run bench -- odata [records] [seconds] [--fresh] [--seed-only] [--page=n]`: the bench form's
// OData feed on PostgreSQL: every record through @odata.nextLink paging (as Excel and Power BI load
// a feed), and one $filter + $orderby page repeated (p50/p99), with the server's CPU per page.
// `--page=n` asks for pages of n (`Prefer: odata.maxpagesize=n`; the server's own size caps it).
// Targets (issue 22): all 100,000 records paged in ≤ 5 s; p99 ≤ 50 ms per filtered page.
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { createAccount, percentile, postgresAvailable, printTable, startServer } from './_server.ts';
import { benchInstance, submissionBody, keptBenchForm } from './_instances.ts';
import { cpuSeconds, machineCheckMs } from './_proc.ts';


async function seed(baseUrl: string, token: string, stored: number, records: number): Promise<number> {
  const pool = new Pool(baseUrl, { connections: 16 });
  const start = performance.now();
  let next = stored;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < records) {
        const { body, contentType } = submissionBody(benchInstance(next++));
        const res = await pool.request({ method: 'POST', path: '/benchuser/submission', headers: { 'content-type': contentType, authorization: `Token ${token}` }, body });
        await res.body.dump();
        if (res.statusCode !== 201) throw new Error(`submission failed: ${res.statusCode}`);
      }
    }),
  );
  await pool.close();
  return (performance.now() - start) / 1000;
}

interface Feed {
  value: unknown[];
  '@odata.nextLink'?: string;
}

export async function main(args: string[]): Promise<void> {
  const numbers = args.filter((a) => /^\d+$/.test(a)).map(Number);
  const records = numbers[0] ?? 100_000;
  const seconds = numbers[1] ?? 10;
  const pageArg = args.find((a) => a.startsWith('--page='));
  const prefer: Record<string, string> = pageArg ? { prefer: `odata.maxpagesize=${Number(pageArg.slice('--page='.length))}` } : {};
  if (!(await postgresAvailable())) {
    console.log('odata: PostgreSQL is not reachable; this benchmark needs it');
    return;
  }
  // The loaded database is kept between runs (`--fresh` starts over): loading 100,000 records
  // through /submission takes many minutes on a busy 2-core machine.
  const fresh = args.includes('--fresh');
  const database = 'gather_bench_odata';
  const server = await startServer('postgres', 19_100, { WORKERS: '0' }, [], fresh ? {} : { keepDatabase: database });
  try {
    const token = await createAccount(server.baseUrl, 'benchuser', { mayExist: true });
    const headers = { authorization: `Token ${token}` };
    const { formId, stored } = await keptBenchForm(server.baseUrl, headers.authorization);
    const loadSeconds = stored < records ? await seed(server.baseUrl, token, stored, records) : 0;
    if (args.includes('--seed-only')) {
      console.log(`odata: ${Math.max(stored, records)} records in ${database} (${Math.max(0, records - stored)} loaded in ${loadSeconds.toFixed(1)} s)`);
      return;
    }
    const total = Math.max(stored, records);
    const check = machineCheckMs();
    const service = `/api/v1/forms/${formId}/odata.svc`;
    // Excel and Power BI send Basic; the reader here uses the token (the same access decision).
    const reader = new Pool(server.baseUrl, { connections: 1 });
    const get = async (path: string, pageHeaders: Record<string, string> = {}): Promise<{ ms: number; body: Feed }> => {
      const t0 = performance.now();
      const res = await reader.request({ method: 'GET', path, headers: { ...headers, ...pageHeaders, accept: 'application/json;odata.metadata=minimal' } });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 200)}`);
      return { ms: performance.now() - t0, body: JSON.parse(text) as Feed };
    };
    await get(`${service}/Submissions?$top=10`); // warm-up

    const rows: Array<Array<string | number>> = [];
    for (const [label, first] of [
      ['Submissions, paged', `${service}/Submissions`],
      ['Submissions.member, paged', `${service}/Submissions.member`],
    ] as const) {
      const cpu0 = cpuSeconds(server.process.pid ?? 0);
      const t0 = performance.now();
      let path: string | undefined = first;
      let pages = 0;
      let entities = 0;
      while (path !== undefined) {
        const { body } = await get(path, prefer);
        pages += 1;
        entities += body.value.length;
        const next = body['@odata.nextLink'];
        path = next === undefined ? undefined : new URL(next).pathname + new URL(next).search;
      }
      const wall = (performance.now() - t0) / 1000;
      const cpu = cpuSeconds(server.process.pid ?? 0) - cpu0;
      rows.push([label, entities, pages, wall.toFixed(2), cpu.toFixed(2), ((cpu * 1000) / pages).toFixed(1), ((cpu * 1e6) / entities).toFixed(1)]);
    }
    const load = loadavg().map((n) => n.toFixed(1)).join(' ');
    console.log(`\nodata: ${total} records of bench_household on PostgreSQL (${Math.max(0, records - stored)} loaded in ${loadSeconds.toFixed(1)} s; machine check ${check} ms; load ${load}${pageArg ? `; ${pageArg}` : ''})\n`);
    printTable(['feed', 'entities', 'pages', 'wall s', 'server CPU s', 'CPU ms/page', 'CPU µs/entity'], rows);

    const filtered = `${service}/Submissions?$filter=${encodeURIComponent("respondent/resp_gender eq 'female' and household/hh_size ge 3 and year(__system/submissionDate) ge 2020")}&$orderby=${encodeURIComponent('__system/submissionDate desc')}&$top=1000`;
    for (let i = 0; i < 3; i++) await get(filtered);
    const latencies: number[] = [];
    const cpu0 = cpuSeconds(server.process.pid ?? 0);
    const stopAt = performance.now() + seconds * 1000;
    let size = 0;
    while (performance.now() < stopAt) {
      const { ms, body } = await get(filtered);
      latencies.push(ms);
      size = body.value.length;
    }
    const cpu = cpuSeconds(server.process.pid ?? 0) - cpu0;
    // One record by key and its repeat's rows by navigation (the links each record carries).
    const sample = (await get(`${service}/Submissions?$select=__id&$top=200&$skip=${Math.floor(total / 2)}`)).body.value as Array<{ __id: string }>;
    const keyLatencies: number[] = [];
    const keyCpu0 = cpuSeconds(server.process.pid ?? 0);
    for (const { __id: id } of sample) {
      keyLatencies.push((await get(`${service}/Submissions('${encodeURIComponent(id)}')`)).ms);
      keyLatencies.push((await get(`${service}/Submissions('${encodeURIComponent(id)}')/member`)).ms);
    }
    const keyCpu = cpuSeconds(server.process.pid ?? 0) - keyCpu0;
    await reader.close();
    const sorted = Float64Array.from(latencies).sort();
    console.log('\n$filter (gender, hh_size ≥ 3, year of submission date) + $orderby submission date desc, $top=1000\n');
    printTable(
      ['requests', 'entities/page', 'p50 ms', 'p99 ms', 'server CPU ms/page'],
      [[latencies.length, size, percentile(sorted, 50).toFixed(1), percentile(sorted, 99).toFixed(1), ((cpu * 1000) / latencies.length).toFixed(1)]],
    );
    const keySorted = Float64Array.from(keyLatencies).sort();
    console.log(`\nSubmissions('uuid:…') and Submissions('uuid:…')/member, ${sample.length} records from the middle\n`);
    printTable(
      ['requests', 'p50 ms', 'p99 ms', 'server CPU ms/request'],
      [[keyLatencies.length, percentile(keySorted, 50).toFixed(1), percentile(keySorted, 99).toFixed(1), ((keyCpu * 1000) / Math.max(1, keyLatencies.length)).toFixed(2)]],
    );
  } finally {
    await server.stop();
  }
}
