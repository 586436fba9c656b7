// The README's tour, run as a newcomer runs it: its ```sh tour-setup block, then every ```sh tour
// block in order, through bash
// against a freshly started server (a real process, on PGlite or its own PostgreSQL database).
// Each curl's HTTP status is recorded: all must be 2xx, and the ones the README annotates
// (`# 204`, `# → 201 …`) must be exactly that, so the tour cannot rot unnoticed.
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createServerStorage, type ServerProcess, type ServerStorage } from './server-process.ts';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

function fencedBlocks(info: string): string[] {
  const pattern = new RegExp(`^\`\`\`${info}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  return [...readme.matchAll(pattern)].map((m) => m[1] ?? '');
}

interface TourCommand {
  readonly text: string;
  readonly curls: number;
  /** The status the README writes beside the command, if any. */
  readonly expected: number | undefined;
}

/**
 * The blocks' commands: lines joined across `\` continuations and open single quotes (the JSON
 * bodies), each with its curl count and annotated status (a trailing `# 204`, or a `# → 201 …`
 * comment on the next line).
 */
function tourCommands(blocks: string[]): TourCommand[] {
  const commands: { text: string; expected: number | undefined }[] = [];
  for (const block of blocks) {
    let pending = '';
    for (const line of block.split('\n')) {
      if (!pending && /^\s*#/.test(line)) {
        const annotated = /^\s*#\s*→\s*(\d{3})\b/.exec(line);
        const last = commands.at(-1);
        if (annotated && last && last.expected === undefined) last.expected = Number(annotated[1]);
        continue;
      }
      if (!pending && !line.trim()) continue;
      pending += (pending ? '\n' : '') + line;
      const quotes = (pending.match(/'/g) ?? []).length;
      if (line.endsWith('\\') || quotes % 2 === 1) continue;
      const trailing = /\s#\s*(\d{3})\s*$/.exec(pending);
      commands.push({ text: pending, expected: trailing ? Number(trailing[1]) : undefined });
      pending = '';
    }
  }
  return commands.map((c) => ({ ...c, curls: (c.text.match(/(^|[\s($|])curl\s/g) ?? []).length }));
}

// Every curl the tour runs goes through this: its status line is read from the headers it dumps,
// written to TOUR_LOG, and anything but 2xx stops the tour (set -e) with the status and command.
const CURL_RECORDER = String.raw`
curl() {
  local headers
  headers=$(mktemp)
  local rc=0
  command curl -D "$headers" "$@" || rc=$?
  local status
  status=$(grep -a '^HTTP/' "$headers" | tail -n 1 | cut -d ' ' -f 2)
  rm -f "$headers"
  [ -n "$status" ] || status=000
  printf '%s\t%s\n' "$status" "$(printf '%s' "$*" | tr '\n' ' ')" >> "$TOUR_LOG"
  if [ "$rc" -ne 0 ]; then echo "tour: curl failed ($rc): curl $*" >&2; return "$rc"; fi
  case "$status" in
    2??) return 0 ;;
    *) echo "tour: HTTP $status from curl $*" >&2; return 22 ;;
  esac
}
`;

let storage: ServerStorage;
let server: ServerProcess;
let workDir: string;

before(async () => {
  storage = await createServerStorage();
  server = await storage.start();
  workDir = mkdtempSync(join(tmpdir(), 'gather-tour-'));
});

after(async () => {
  await server?.stop();
  await storage?.remove();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: repoRoot, env: { PATH: process.env['PATH'] ?? '', HOME: workDir, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

interface TourRun {
  readonly commands: TourCommand[];
  readonly code: number | null;
  readonly stderr: string;
  readonly calls: { status: number; command: string }[];
}

let tourRun: Promise<TourRun> | undefined;

/**
 * Runs the README's tour against the file's server, once: the first test checks how it ran, the
 * second what it stored, and either may run without the other.
 */
function runTour(): Promise<TourRun> {
  tourRun ??= (async () => {
    const [setup] = fencedBlocks('sh tour-setup');
    const whole = fencedBlocks('sh tour').join('\n');
    const log = join(workDir, 'curl.log');
    const script = [
      'set -euo pipefail',
      CURL_RECORDER,
      setup,
      // The tour's own address is replaced by the test server's.
      'export GATHER="$TOUR_BASE_URL"',
      whole,
    ].join('\n');
    const run = await runBash(script, { TOUR_BASE_URL: server.baseUrl, TOUR_LOG: log });
    const calls = readFileSync(log, 'utf8').trimEnd().split('\n').map((line) => {
      const [status = '', ...args] = line.split('\t');
      return { status: Number(status), command: args.join('\t') };
    });
    return { commands: tourCommands(fencedBlocks('sh tour')), code: run.code, stderr: run.stderr, calls };
  })();
  return tourRun;
}

test('the README tour runs as written against a fresh server', async () => {
  const [setup] = fencedBlocks('sh tour-setup');
  const tour = fencedBlocks('sh tour');
  assert.ok(setup?.includes('export GATHER=') && setup.includes('field()'), 'the README sets GATHER and defines field() before the tour');
  assert.ok(tour.length >= 3, 'the tour blocks are marked ```sh tour');
  const whole = tour.join('\n');
  for (const step of ['/api/v1/profiles/bob/change_password', '/share', 'examples/household.xlsx', 'examples/household-instance.xml', '/api/v1/orgs']) {
    assert.ok(whole.includes(step), `the tour covers ${step}`);
  }
  assert.doesNotMatch(whole, /127\.0\.0\.1:8000/, 'the tour addresses the server as $GATHER');

  const { commands, code, stderr, calls } = await runTour();
  const context = `exit ${code}\nstderr: ${stderr.slice(-2000)}\ncalls:\n${calls.map((c) => `${c.status} ${c.command}`).join('\n')}`;
  assert.equal(code, 0, context);
  assert.equal(calls.length, commands.reduce((n, c) => n + c.curls, 0), `every curl of the tour ran\n${context}`);

  let index = 0;
  for (const command of commands) {
    for (let i = 0; i < command.curls; i++, index++) {
      const call = calls[index];
      assert.ok(call && call.status >= 200 && call.status < 300, `${call?.status} for ${command.text}`);
      if (i === 0 && command.expected !== undefined) assert.equal(call.status, command.expected, command.text);
    }
  }
});

test('the example record is stored as the form reads it, with its photo', async () => {
  const tour = await runTour();
  assert.equal(tour.code, 0, `the tour ran through: ${tour.stderr.slice(-2000)}`);
  const auth = { authorization: `Basic ${Buffer.from('bob:another-Passphrase-8').toString('base64')}` };
  const forms = (await (await fetch(`${server.baseUrl}/api/v1/forms`, { headers: auth })).json()) as { formid: number; id_string: string }[];
  const form = forms.find((f) => f.id_string === 'household');
  assert.ok(form, 'the tour published examples/household.xlsx');
  const records = (await (await fetch(`${server.baseUrl}/api/v1/data/${form.formid}`, { headers: auth })).json()) as Record<string, unknown>[];
  assert.equal(records.length, 1);
  const record = records[0] ?? {};
  assert.equal(record['name'], 'Amina Wanjiru');
  assert.equal(record['water'], 'well');
  assert.equal(record['photo'], 'house.jpg');
  assert.equal((record['members'] as unknown[]).length, 2);
  const attachments = record['_attachments'] as { filename: string; mimetype: string }[];
  assert.deepEqual(attachments.map((a) => [a.filename.split('/').at(-1), a.mimetype]), [['house.jpg', 'image/jpeg']]);
});

test('examples/household.xlsx is what scripts/example-household.ts writes', () => {
  const out = join(workDir, 'household.xlsx');
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/example-household.ts'), out], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.ok(readFileSync(out).equals(readFileSync(join(repoRoot, 'examples/household.xlsx'))), 'run the script and commit its output');
});
