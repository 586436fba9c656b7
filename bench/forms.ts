// `npm run bench -- forms [seconds]`: publishing the big corpus form through the API, and
// GET /api/v1/forms with 1,000 forms visible to the caller, on PGlite and PostgreSQL.
// Target (issue 4): the list at p99 ≤ 30 ms.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount, postgresAvailable, printTable, repoRoot, startServer, type Backend } from './_server.ts';
import { runLoad } from './_load.ts';

const BIG_FORM = join(repoRoot, '../shared/xlsform-corpus/forms/synthetic__big_form.xlsx');

function multipartBody(fileName: string, bytes: Uint8Array, contentType: string): { body: Buffer; type: string } {
  const boundary = `----bench${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="xls_file"; filename="${fileName}"\r\nContent-Type: ${contentType}\r\n\r\n`),
    Buffer.from(bytes),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

async function publish(baseUrl: string, token: string, fileName: string, bytes: Uint8Array, contentType: string): Promise<number> {
  const { body, type } = multipartBody(fileName, bytes, contentType);
  const started = performance.now();
  const res = await fetch(`${baseUrl}/api/v1/forms`, { method: 'POST', headers: { authorization: `Token ${token}`, 'content-type': type }, body });
  if (res.status !== 201) throw new Error(`publish failed: ${res.status} ${(await res.text()).slice(0, 300)}`);
  await res.arrayBuffer();
  return performance.now() - started;
}

function smallForm(n: number): string {
  return `survey,,,\n,type,name,label\n,text,name,Name\n,integer,age,Age\nsettings,,,\n,form_id,form_title,version\n,bench_form_${n},Bench form ${n},1\n`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export async function main(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 10);
  const backends: Backend[] = ['pglite'];
  if (await postgresAvailable()) backends.push('postgres');
  const bigForm = readFileSync(BIG_FORM);
  const publishRows: Array<Array<string | number>> = [];
  const listRows: Array<Array<string | number>> = [];
  let port = 18_600;
  for (const backend of backends) {
    const server = await startServer(backend, port++);
    try {
      const token = await createAccount(server.baseUrl, 'benchuser');
      const xlsx = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
      const times: number[] = [];
      for (let i = 0; i < 5; i++) times.push(await publish(server.baseUrl, token, 'synthetic__big_form.xlsx', bigForm, xlsx));
      publishRows.push([backend, 'synthetic__big_form.xlsx (2,045 questions)', times.length, median(times).toFixed(0), Math.max(...times).toFixed(0)]);

      const smallTimes: number[] = [];
      for (let n = 0; n < 995; n++) smallTimes.push(await publish(server.baseUrl, token, `bench_form_${n}.csv`, Buffer.from(smallForm(n)), 'text/csv'));
      publishRows.push([backend, 'small CSV form', smallTimes.length, median(smallTimes).toFixed(1), Math.max(...smallTimes).toFixed(0)]);

      const headers = { authorization: `Token ${token}` };
      const count = (await (await fetch(`${server.baseUrl}/api/v1/forms`, { headers })).json()) as unknown[];
      for (const connections of [1, 4, 32]) {
        await runLoad(server.baseUrl, '/api/v1/forms', headers, { connections, seconds: 2 });
        const r = await runLoad(server.baseUrl, '/api/v1/forms', headers, { connections, seconds });
        listRows.push([backend, count.length, connections, r.requests, r.errors, Math.round(r.rps), r.p50.toFixed(1), r.p99.toFixed(1)]);
      }
    } finally {
      await server.stop();
    }
  }
  console.log('\nforms: publishing through POST /api/v1/forms (ms per request)\n');
  printTable(['backend', 'form', 'runs', 'median ms', 'max ms'], publishRows);
  console.log(`\nforms: GET /api/v1/forms, Token auth, ${seconds} s per row (after 2 s warm-up); target p99 ≤ 30 ms\n`);
  printTable(['backend', 'forms listed', 'clients', 'requests', 'errors', 'req/s', 'p50 ms', 'p99 ms'], listRows);
}
