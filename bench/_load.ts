// A closed-loop HTTP load generator: N keep-alive clients each send the next request as soon as
// the previous one is answered, for a fixed time; latencies are recorded per request.
import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
}

export async function runLoad(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  options: { connections: number; seconds: number; expectStatus?: number },
): Promise<LoadResult> {
  const pool = new Pool(baseUrl, { connections: options.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const stopAt = started + options.seconds * 1000;
  const expect = options.expectStatus ?? 200;
  const client = async (): Promise<void> => {
    while (performance.now() < stopAt) {
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: 'GET', path, headers });
        await res.body.dump();
        if (res.statusCode !== expect) errors++;
        else latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, client));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  const sorted = Float64Array.from(latencies).sort();
  const pick = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
  return { requests: latencies.length, errors, seconds, rps: latencies.length / seconds, p50: pick(50), p99: pick(99) };
}
