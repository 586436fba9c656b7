import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runXls2xform } from '../src/cli.ts';

function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (() => true) as typeof process.stderr.write;
  return fn().finally(() => {
    process.stderr.write = write;
  });
}

describe('gather xls2xform', () => {
  it('writes the XForm and the form JSON and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xls2xform-'));
    const form = join(dir, 'household.md');
    writeFileSync(form, '| survey |\n| | type | name | label |\n| | integer | n | N |\n');
    const code = await quietly(() => runXls2xform([form, join(dir, 'out.xml'), '--json', join(dir, 'out.json'), '--name', 'hh']));
    assert.equal(code, 0);
    assert.match(readFileSync(join(dir, 'out.xml'), 'utf8'), /<hh id="household">/);
    const json = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(json['id_string'], 'household');
    assert.equal(json['name'], 'hh');
  });

  it('exits non-zero and writes nothing for a rejected form', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xls2xform-'));
    const form = join(dir, 'bad.md');
    writeFileSync(form, '| survey |\n| | type | name | label |\n| | calculate | c | C |\n');
    const code = await quietly(() => runXls2xform([form, join(dir, 'out.xml')]));
    assert.notEqual(code, 0);
    assert.equal(existsSync(join(dir, 'out.xml')), false);
  });

  it('exits 2 with usage for missing arguments', async () => {
    assert.equal(await quietly(() => runXls2xform([])), 2);
  });
});
