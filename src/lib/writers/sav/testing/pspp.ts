// Reads a .sav back through GNU PSPP, the only trustworthy checker: SYSFILE INFO for the
// dictionary and SAVE TRANSLATE for the data, both as CSV. Any PSPP warning or error fails.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCsv } from './csv.ts';

export interface PsppVariable {
  name: string;
  position: string;
  label: string;
  measure: string;
  width: string;
  alignment: string;
  printFormat: string;
  writeFormat: string;
}

export interface PsppReport {
  /** The File Information table: Label, Created, Cases, Compression, Encoding, … */
  info: Map<string, string>;
  variables: PsppVariable[];
  /** Variable name → [value as PSPP prints it, label] in file order. */
  valueLabels: Map<string, Array<[string, string]>>;
  /** The header row (variable names) and then one row per case; system-missing is ' '. */
  data: string[][];
}

/** Why PSPP checks cannot run here, or undefined when `pspp` is installed. */
export function psppUnavailableReason(): string | undefined {
  const probe = spawnSync('pspp', ['--version'], { encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return undefined;
  return 'GNU PSPP is not installed (apt-get install -y pspp); the .sav checks need it';
}

/** Splits PSPP's CSV output into its tables ("Table: NAME" followed by rows, blank line after). */
function tables(rows: string[][]): Map<string, string[][]> {
  const found = new Map<string, string[][]>();
  let current: string[][] | undefined;
  for (const row of rows) {
    const first = row[0] ?? '';
    if (row.length === 1 && first.startsWith('Table: ')) {
      current = [];
      found.set(first.slice('Table: '.length), current);
    } else if (row.length === 1 && first === '') {
      current = undefined;
    } else {
      current?.push(row);
    }
  }
  return found;
}

/** PSPP leaves out columns nobody uses (no labels: no Label column), so cells are found by heading. */
function variablesFrom(table: string[][] | undefined): PsppVariable[] {
  const [heading = [], ...rows] = table ?? [];
  return rows.map((row) => {
    const cell = (name: string): string => {
      const index = heading.indexOf(name);
      return index < 0 ? '' : (row[index] ?? '');
    };
    return {
      name: cell('Name'),
      position: cell('Position'),
      label: cell('Label'),
      measure: cell('Measurement Level'),
      width: cell('Width'),
      alignment: cell('Alignment'),
      printFormat: cell('Print Format'),
      writeFormat: cell('Write Format'),
    };
  });
}

function valueLabelsFrom(table: string[][] | undefined): Map<string, Array<[string, string]>> {
  const labels = new Map<string, Array<[string, string]>>();
  let current: Array<[string, string]> = [];
  for (const [variable = '', value = '', label = ''] of (table ?? []).slice(1)) {
    if (variable !== '') {
      current = [];
      labels.set(variable, current);
    }
    current.push([value, label]);
  }
  return labels;
}

export function readWithPspp(chunks: ReadonlyArray<Uint8Array>): PsppReport {
  const dir = mkdtempSync(join(tmpdir(), 'sav-pspp-'));
  try {
    const file = join(dir, 'data.sav');
    writeFileSync(file, Buffer.concat(chunks));
    const syntax = [
      'SET TVARS=NAMES.',
      `SYSFILE INFO FILE='${file}'.`,
      `GET FILE='${file}'.`,
      `SAVE TRANSLATE /OUTFILE='${join(dir, 'data.csv')}' /TYPE=CSV /FIELDNAMES /CELLS=VALUES /REPLACE.`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'check.sps'), syntax);
    const run = spawnSync('pspp', ['-o', join(dir, 'report.csv'), join(dir, 'check.sps')], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error !== undefined) throw new Error(psppUnavailableReason() ?? run.error.message);
    const messages = `${run.stdout}${run.stderr}`.trim();
    if (run.status !== 0 || messages !== '') {
      throw new Error(`PSPP complained (exit ${String(run.status)}):\n${messages}`);
    }
    const report = tables(parseCsv(readFileSync(join(dir, 'report.csv'), 'utf8')));
    const info = new Map<string, string>();
    for (const [key = '', value = ''] of report.get('File Information') ?? []) info.set(key, value);
    return {
      info,
      variables: variablesFrom(report.get('Variables')),
      valueLabels: valueLabelsFrom(report.get('Value Labels')),
      data: parseCsv(readFileSync(join(dir, 'data.csv'), 'utf8')),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
