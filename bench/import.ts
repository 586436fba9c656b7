// `npm run bench -- import [rows] [--sizes N,M] [--pglite] [--xlsx-rows N] [--node-options FLAGS]`: imports ROWS records of the bench form
// (../shared/bench) from a CSV in the export's layout (groups as paths, three `member[n]/…` repeat
// blocks, split select_multiple columns, geopoint parts, meta columns) and from an XLSX of the
// same rows, as import jobs on a real server; prints rows/s, file size, the server's RSS before and
// at its peak during each import (--sizes: several CSV sizes, to show that memory is flat), and
// CPU milliseconds per row of the server process and of its PostgreSQL backends (wall rates on a
// shared machine follow its load, printed beside them; CPU per row does not).
// Target (issue 7): ≥ 10,000 rows/s from CSV on PostgreSQL, memory flat in the file size.
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import * as XLSX from '@e965/xlsx';
import { convert } from '../packages/xlsform/src/index.ts';
import pg from 'pg';
import { createAccount, POSTGRES_SERVER, postgresAvailable, printTable, startServer, type Backend } from './_server.ts';
import { BENCH_FORM } from './_instances.ts';
import { cpuSeconds, peakRssMb, resetPeakRss } from './_proc.ts';

const pick = <T>(items: readonly T[], n: number): T => items[n % items.length] as T;

/** The bench form's choices of `assets`, read from the form as the export reads them. */
export function assetChoices(): string[] {
  const result = convert(readFileSync(BENCH_FORM), { fileName: 'bench_household.xlsx' });
  if (!result.ok) throw new Error('bench form does not convert');
  const choices = (result.formJson as { choices?: Record<string, Array<{ name: string }>> }).choices ?? {};
  return (choices['assets'] ?? []).map((c) => c.name);
}

const MEMBER_FIELDS = ['m_name', 'm_age', 'm_sex', 'm_relation', 'm_school', 'm_occupation'];
const META = ['_id', '_uuid', '_submission_time', '_date_modified', '_tags', '_notes', '_version', '_duration', '_submitted_by', '_last_edited_by', '_total_media', '_media_count', '_media_all_received'];

function header(assets: readonly string[]): string[] {
  return [
    'start', 'end', 'today', 'deviceid', 'enumerator', 'consent',
    'respondent/resp_name', 'respondent/resp_age', 'respondent/resp_gender', 'respondent/resp_phone', 'respondent/resp_education', 'respondent/resp_dob',
    'household/hh_size', 'household/hh_income', 'household/location',
    'household/_location_latitude', 'household/_location_longitude', 'household/_location_altitude', 'household/_location_precision',
    'household/water_source', ...assets.map((a) => `household/assets/${a}`), 'household/roof_material', 'household/rooms',
    'household/electricity', 'household/toilet', 'household/food_security_score', 'household/visit_time', 'household/notes',
    ...[1, 2, 3].flatMap((i) => MEMBER_FIELDS.map((f) => `member[${i}]/${f}`)),
    'satisfaction', 'comments', 'instance_name_calc', 'meta/instanceID', 'meta/instanceName', ...META,
  ];
}

/** The n-th record: bench/_instances.ts's values for the n-th submission, with choice names the form lists. */
function row(n: number, assets: readonly string[]): string[] {
  const day = String((n % 28) + 1).padStart(2, '0');
  const lat = (-1 - (n % 100) / 1000).toFixed(6);
  const lon = (36.8 + (n % 100) / 1000).toFixed(6);
  const picked = new Set(pick(['radio tv', 'phone', 'radio phone bicycle', 'tv fridge'], n).split(' '));
  const name = `Respondent ${n}`;
  const uuid = randomUUID();
  const members = [1, 2, 3].flatMap((i) => [
    `Member ${n}-${i}`, String((n + i * 7) % 80), pick(['male', 'female'], n + i), pick(['head', 'spouse', 'child'], i - 1),
    pick(['yes', 'no'], n + i), pick(['farmer', 'teacher', 'student', 'trader'], n + i),
  ]);
  return [
    `2026-11-${day}T08:00:00.000+03:00`, `2026-11-${day}T08:20:00.000+03:00`, `2026-11-${day}`, `collect:${1000 + (n % 50)}`,
    pick(['amina', 'brian', 'chen', 'dora'], n), 'yes',
    name, String(18 + (n % 60)), pick(['male', 'female'], n), `+2547${String(n).padStart(8, '0')}`,
    pick(['none', 'primary', 'secondary', 'tertiary'], n), `19${50 + (n % 50)}-0${(n % 9) + 1}-1${n % 10}`,
    String(1 + (n % 12)), String(1000 + (n % 997) * 13.5), `${lat} ${lon} 1650 5`, lat, lon, '1650', '5',
    pick(['piped', 'borehole', 'well', 'river'], n), ...assets.map((a) => (picked.has(a) ? 'True' : 'False')),
    pick(['metal', 'thatch', 'tile'], n), String(1 + (n % 6)), pick(['yes', 'no'], n), pick(['flush', 'pit', 'none'], n),
    String(n % 10), `${String(8 + (n % 10)).padStart(2, '0')}:15:00.000+03:00`, `Visit ${n} & notes <ok>, "quoted"`,
    ...members,
    pick(['1', '2', '3', '4', '5'], n), 'none', `${name} - 2026-11-${day}`, `uuid:${uuid}`, `${name} - 2026-11-${day}`,
    String(n + 1), uuid, `2026-11-${day}T09:00:00.123456+00:00`, `2026-11-${day}T09:00:00.123456+00:00`, '', '', '2026111901', '1200.0',
    'benchuser', 'n/a', '0', '0', 'True',
  ];
}

function csvCell(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export async function writeCsv(path: string, rows: number, assets: readonly string[]): Promise<void> {
  const out = createWriteStream(path);
  const write = async (line: string): Promise<void> => {
    if (!out.write(line)) await once(out, 'drain');
  };
  await write(`${header(assets).join(',')}\n`);
  for (let n = 0; n < rows; n++) await write(`${row(n, assets).map(csvCell).join(',')}\n`);
  out.end();
  await once(out, 'close');
}

export function writeXlsx(path: string, rows: number, assets: readonly string[]): void {
  const data: string[][] = [header(assets)];
  for (let n = 0; n < rows; n++) data.push(row(n, assets));
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(data), 'bench_household');
  writeFileSync(path, XLSX.write(book, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer);
}

async function publish(baseUrl: string, token: string): Promise<number> {
  const form = new FormData();
  form.append('xls_file', new Blob([readFileSync(BENCH_FORM)]), 'bench_household.xlsx');
  const res = await fetch(`${baseUrl}/api/v1/forms`, { method: 'POST', headers: { authorization: `Token ${token}` }, body: form });
  if (res.status !== 201) throw new Error(`publish failed ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { formid: number }).formid;
}

/**
 * CPU used by the PostgreSQL backends serving one database: sampled while the import runs, since
 * the server's pool closes idle connections (the last sample of a closed one still counts).
 */
class BackendCpu {
  readonly #start = new Map<number, number>();
  readonly #last = new Map<number, number>();
  #client: pg.Client | undefined;

  constructor(private readonly dbName: string | null) {}

  async begin(): Promise<void> {
    if (this.dbName === null) return;
    this.#client = new pg.Client({ connectionString: POSTGRES_SERVER });
    await this.#client.connect();
    for (const pid of await this.#pids()) this.#start.set(pid, cpuSeconds(pid));
  }

  async sample(): Promise<void> {
    for (const pid of await this.#pids()) this.#last.set(pid, cpuSeconds(pid));
  }

  async end(): Promise<number | null> {
    if (!this.#client) return null;
    await this.sample();
    await this.#client.end();
    let total = 0;
    for (const [pid, cpu] of this.#last) total += cpu - (this.#start.get(pid) ?? 0);
    return total;
  }

  async #pids(): Promise<number[]> {
    if (!this.#client) return [];
    const result = await this.#client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [this.dbName]);
    return result.rows.map((r) => r.pid);
  }
}

interface Run {
  seconds: number;
  additions: number;
  peakMb: number;
  serverCpu: number;
  backendCpu: number | null;
  load: number;
}

async function importFile(
  baseUrl: string, token: string, formId: number, pid: number, dbName: string | null, field: string, path: string, name: string,
): Promise<Run> {
  resetPeakRss(pid);
  const backend = new BackendCpu(dbName);
  await backend.begin();
  const cpuBefore = cpuSeconds(pid);
  const started = performance.now();
  const form = new FormData();
  form.append(field, new Blob([readFileSync(path)]), name);
  const auth = { authorization: `Token ${token}` };
  const res = await fetch(`${baseUrl}/api/v1/forms/${formId}/import`, { method: 'POST', headers: auth, body: form });
  const body = (await res.json()) as { task_id?: string; additions?: number };
  if (res.status !== 200) throw new Error(`import failed ${res.status}: ${JSON.stringify(body)}`);
  let result = body;
  if (body.task_id !== undefined) {
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      await backend.sample();
      const poll = await fetch(`${baseUrl}/api/v1/forms/${formId}/import?job_uuid=${body.task_id}`, { headers: auth });
      const status = (await poll.json()) as { job_status?: string; additions?: number };
      if (status.job_status === 'SUCCESS') {
        result = status;
        break;
      }
      if (poll.status !== 200) throw new Error(`import job failed: ${JSON.stringify(status)}`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const serverCpu = cpuSeconds(pid) - cpuBefore;
  const load = loadavg()[0] ?? Number.NaN;
  return { seconds, additions: result.additions ?? 0, peakMb: peakRssMb(pid), serverCpu, backendCpu: await backend.end(), load };
}

/** The process's resident set now (VmRSS) in MB: the baseline of each run. */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024);
}

export async function main(args: string[]): Promise<void> {
  const rows = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
  // `--sizes 100000,300000`: CSV imports of each size, one after the other on the same server, so
  // that the table shows whether peak memory follows the file's size (it must not).
  const sizesIndex = args.indexOf('--sizes');
  const sizes = sizesIndex >= 0 ? (args[sizesIndex + 1] ?? '').split(',').map(Number).filter((n) => n > 0) : [rows];
  const xlsxIndex = args.indexOf('--xlsx-rows');
  const xlsxRows = xlsxIndex >= 0 ? Number(args[xlsxIndex + 1]) : (sizes[0] ?? rows);
  // `--node-options '--max-semi-space-size=64'` or `'--cpu-prof --cpu-prof-dir=/tmp/prof'`: flags for
  // the server's node (passed on its command line: NODE_OPTIONS refuses --cpu-prof).
  const nodeOptionsIndex = args.indexOf('--node-options');
  const serverNodeArgs = nodeOptionsIndex >= 0 ? (args[nodeOptionsIndex + 1] ?? '').split(/\s+/).filter((a) => a !== '') : [];
  const backends: Backend[] = [];
  if (await postgresAvailable()) backends.push('postgres');
  if (args.includes('--pglite') || backends.length === 0) backends.push('pglite');

  const dir = mkdtempSync(join(tmpdir(), 'gather-import-bench-'));
  const assets = assetChoices();
  const runs: Array<[string, string, string, number]> = [];
  for (const size of sizes) {
    const csvPath = join(dir, `bench-${size}.csv`);
    const t = performance.now();
    await writeCsv(csvPath, size, assets);
    console.log(`CSV: ${size} rows, ${(statSync(csvPath).size / 1e6).toFixed(1)} MB, written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    runs.push(['csv', 'csv_file', csvPath, size]);
  }
  if (xlsxRows > 0) {
    const xlsxPath = join(dir, 'bench.xlsx');
    const t = performance.now();
    writeXlsx(xlsxPath, xlsxRows, assets);
    console.log(`XLSX: ${xlsxRows} rows, ${(statSync(xlsxPath).size / 1e6).toFixed(1)} MB, written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    runs.push(['xlsx', 'xls_file', xlsxPath, xlsxRows]);
  }

  const table: Array<Array<string | number>> = [];
  let port = 18_900;
  try {
    for (const backend of backends) {
      const server = await startServer(backend, port++, { WORKERS: '1', UPLOAD_LIMIT: String(1024 * 1024 * 1024) }, serverNodeArgs);
      try {
        const pid = server.process.pid ?? 0;
        const token = await createAccount(server.baseUrl, 'benchuser');
        for (const [format, field, path, count] of runs) {
          const formId = await publish(server.baseUrl, token);
          // The database name bench/_server.ts gives a PostgreSQL server's database.
          const dbName = backend === 'postgres' ? `gather_bench_${process.pid}_${port - 1}` : null;
          const beforeMb = rssMb(pid);
          const run = await importFile(server.baseUrl, token, formId, pid, dbName, field, path, `bench.${format}`);
          if (run.additions !== count) throw new Error(`${format}: ${run.additions} of ${count} rows imported`);
          const perRow = (cpu: number | null): string => (cpu === null ? '-' : ((cpu * 1000) / count).toFixed(3));
          const row = [
            backend, format, count, run.seconds.toFixed(1), Math.round(count / run.seconds), perRow(run.serverCpu), perRow(run.backendCpu),
            run.load.toFixed(1), beforeMb, run.peakMb,
          ];
          console.log(row.join(' | '));
          table.push(row);
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(['backend', 'format', 'rows', 'seconds', 'rows/s', 'server CPU ms/row', 'PG CPU ms/row', 'load (1 min)', 'RSS before MB', 'peak RSS MB'], table);
}
