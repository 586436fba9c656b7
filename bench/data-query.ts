// `npm run bench -- data-query [records] [seconds]`: GET /api/v1/data/{pk} with a `query` on an answer,
// `sort` on _submission_time and pages of 1,000, over 100,000 stored records, on PostgreSQL.
// Target (issue 5): p99 ≤ 50 ms per page of 1,000.
import { fetch as undiciFetch, Pool } from 'undici';
import { createAccount, postgresAvailable, printTable, startServer } from './_server.ts';
import { benchInstance, submissionBody, keptBenchForm } from './_instances.ts';


export async function main(args: string[]): Promise<void> {
  const records = Number(args[0] ?? 100_000);
  const seconds = Number(args[1] ?? 10);
  if (!(await postgresAvailable())) {
    console.log('data-query: PostgreSQL is not reachable; this benchmark needs it');
    return;
  }
  // The loaded database is kept between runs (`--fresh` starts over): loading 100,000 records
  // through /submission takes minutes.
  const fresh = args.includes('--fresh');
  const database = 'gather_bench_data_query';
  const server = await startServer('postgres', 19_000, { WORKERS: '0' }, [], fresh ? {} : { keepDatabase: database });
  try {
    const token = await createAccount(server.baseUrl, 'benchuser', { mayExist: true });
    const { formId, stored } = await keptBenchForm(server.baseUrl, `Token ${token}`);
    // Load the missing records through the real submission endpoint.
    const pool = new Pool(server.baseUrl, { connections: 16 });
    const loadStart = performance.now();
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
    const loadSeconds = (performance.now() - loadStart) / 1000;
    await pool.close();

    const query = encodeURIComponent(JSON.stringify({ 'respondent/resp_gender': 'female', 'household/hh_size': { $gte: 3 } }));
    const sort = encodeURIComponent(JSON.stringify({ _submission_time: -1 }));
    const headers = { authorization: `Token ${token}` };
    const reader = new Pool(server.baseUrl, { connections: 1 });
    const getPage = async (page: number): Promise<{ ms: number; bytes: number; link: string }> => {
      const t0 = performance.now();
      const res = await reader.request({ method: 'GET', path: `/api/v1/data/${formId}?query=${query}&sort=${sort}&page=${page}&page_size=1000`, headers });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`page ${page}: ${res.statusCode}`);
      return { ms: performance.now() - t0, bytes: text.length, link: String(res.headers['link'] ?? '') };
    };
    // The first page after a change to the form's data scans every record once (the match list);
    // the pages after it read only their own records.
    const cold: number[] = [];
    let lastPage = 1;
    for (let run = 0; run < 3; run++) {
      if (run > 0) {
        const { body, contentType } = submissionBody(benchInstance(records + run));
        const res = await undiciFetch(`${server.baseUrl}/benchuser/submission`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
        if (res.status !== 201) throw new Error(`submission failed: ${res.status}`);
      }
      const first = await getPage(1);
      cold.push(first.ms);
      lastPage = Number(/page=(\d+)&page_size=1000>; rel="last"/.exec(first.link)?.[1] ?? 1);
    }

    const latencies: number[] = [];
    let page = 1;
    let bytes = 0;
    const stopAt = performance.now() + seconds * 1000;
    while (performance.now() < stopAt) {
      const result = await getPage(page);
      bytes += result.bytes;
      latencies.push(result.ms);
      page = (page % lastPage) + 1;
    }
    await reader.close();
    latencies.sort((a, b) => a - b);
    const at = (p: number): string => (latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? Number.NaN).toFixed(1);
    console.log(`\ndata-query: ${Math.max(records, stored)} records (${Math.max(0, records - stored)} loaded through /submission in ${loadSeconds.toFixed(1)} s, the rest kept in ${fresh ? 'a fresh database' : database}); pages of 1,000 matching a query, sorted by _submission_time desc\n`);
    printTable(
      ['backend', 'records', 'matching pages', 'first page after a change (ms, 3 runs)', 'pages read', 'avg KB/page', 'p50 ms', 'p99 ms'],
      [['postgres', Math.max(records, stored), lastPage, cold.map((ms) => ms.toFixed(0)).join(' / '), latencies.length, Math.round(bytes / latencies.length / 1024), at(50), at(99)]],
    );
  } finally {
    await server.stop();
  }
}
