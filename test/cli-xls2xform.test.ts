// `gather xls2xform` runs the converter's own bundle (bin/converter.js), not the server's: the
// command's files, messages and exit codes must be those of packages/xlsform's CLI run in-process.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runXls2xform } from '../packages/xlsform/src/cli.ts';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const BENCH_FORM = join(repoRoot, '../shared/bench/bench_household.xlsx');

interface Outcome {
  code: number | null;
  stderr: string;
  files: Record<string, string | undefined>;
}

function filesIn(dir: string): Record<string, string | undefined> {
  const read = (name: string): string | undefined => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : undefined);
  return { xml: read('out.xml'), json: read('out.json'), itemsets: read('itemsets.csv') };
}

function viaCommand(form: string, extra: string[]): Outcome {
  const dir = mkdtempSync(join(tmpdir(), 'xls2xform-cmd-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['GATHER_TSX'];
  const result = spawnSync(process.execPath, [join(repoRoot, 'bin/gather.js'), 'xls2xform', form, join(dir, 'out.xml'), '--json', join(dir, 'out.json'), ...extra], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stderr: result.stderr, files: filesIn(dir) };
}

async function inProcess(form: string, extra: string[]): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'xls2xform-lib-'));
  let stderr = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await runXls2xform([form, join(dir, 'out.xml'), '--json', join(dir, 'out.json'), ...extra]);
    return { code, stderr, files: filesIn(dir) };
  } finally {
    process.stderr.write = write;
  }
}

describe('gather xls2xform (the command)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xls2xform-forms-'));
  const forms: Array<[string, string, string[]]> = [
    ['a valid form with a warning', '| survey |\n| | type | name | label |\n| | integer | n | N |\n| | image | photo | Photo |\n', ['--name', 'hh']],
    ['a rejected form', '| survey |\n| | type | name | label |\n| | calculate | c | C |\n', []],
    ['external choices', '| survey |\n| | type | name | label | choice_filter |\n| | select_one_external city | city | City | state=1 |\n| external_choices |\n| | list_name | name | label | state |\n| | city | a | A | 1 |\n', []],
  ];
  for (const [what, markdown, extra] of forms) {
    it(`gives what the library gives for ${what}`, async () => {
      const form = join(dir, `${what.replaceAll(' ', '_')}.md`);
      writeFileSync(form, markdown);
      assert.deepEqual(viaCommand(form, extra), await inProcess(form, extra));
    });
  }

  it('gives what the library gives for the bench form (xlsx)', { skip: !existsSync(BENCH_FORM) && 'no bench form' }, async () => {
    const outcome = viaCommand(BENCH_FORM, []);
    assert.equal(outcome.code, 0);
    assert.deepEqual(outcome, await inProcess(BENCH_FORM, []));
  });

  it('exits 2 with the usage line when arguments are missing', () => {
    const result = spawnSync(process.execPath, [join(repoRoot, 'bin/gather.js'), 'xls2xform'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /^usage: gather xls2xform/);
  });
});
