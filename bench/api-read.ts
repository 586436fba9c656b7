// `npm run bench -- api-read [seconds]`: requests/s and p50/p99 for authenticated Token GETs of
// /api/v1/user and /api/v1/profiles/{username}, 32 keep-alive clients, on PGlite and PostgreSQL.
// Target (issue 2): ≥ 5,000 requests/s with p99 ≤ 20 ms on PostgreSQL.
import { createAccount, postgresAvailable, printTable, startServer, type Backend } from './_server.ts';
import { runLoad } from './_load.ts';

export async function main(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 10);
  const connections = 32;
  const backends: Backend[] = ['pglite'];
  if (await postgresAvailable()) backends.push('postgres');
  else console.log('PostgreSQL not reachable: measuring PGlite only');

  const rows: Array<Array<string | number>> = [];
  let port = 18_400;
  for (const backend of backends) {
    const server = await startServer(backend, port++);
    try {
      const token = await createAccount(server.baseUrl, 'benchuser');
      for (let i = 0; i < 50; i++) await createAccount(server.baseUrl, `other${i}`).catch(() => undefined);
      const headers = { authorization: `Token ${token}` };
      for (const path of ['/api/v1/user', '/api/v1/profiles/benchuser']) {
        await runLoad(server.baseUrl, path, headers, { connections, seconds: 2 }); // warm-up
        const r = await runLoad(server.baseUrl, path, headers, { connections, seconds });
        rows.push([backend, `GET ${path}`, connections, r.requests, r.errors, Math.round(r.rps), r.p50.toFixed(2), r.p99.toFixed(2)]);
      }
    } finally {
      await server.stop();
    }
  }
  console.log(`\napi-read: Token-authenticated GETs, ${connections} keep-alive clients, ${seconds} s each (after 2 s warm-up)\n`);
  printTable(['backend', 'request', 'clients', 'requests', 'errors', 'req/s', 'p50 ms', 'p99 ms'], rows);
}
