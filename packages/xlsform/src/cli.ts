// `gather xls2xform FORM OUT.xml [--json OUT.json] [--name ROOT]`
// Writes the XForm (and the form JSON, and itemsets.csv beside the XForm when
// the form has external choices); on failure prints the reasons and writes nothing.
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { convertToXForm } from './convert.ts';

const USAGE = 'usage: gather xls2xform FORM OUT.xml [--json OUT.json] [--name ROOT]';

interface CliArgs {
  form: string;
  out: string;
  json?: string;
  name?: string;
}

function parseArgs(args: string[]): CliArgs | string {
  const positional: string[] = [];
  let json: string | undefined;
  let name: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--json' || arg === '--name') {
      const value = args[i + 1];
      if (value === undefined) return `${arg} needs a value`;
      if (arg === '--json') json = value;
      else name = value;
      i++;
    } else if (arg.startsWith('--json=')) json = arg.slice(7);
    else if (arg.startsWith('--name=')) name = arg.slice(7);
    else if (arg === '-h' || arg === '--help') return USAGE;
    else if (arg.startsWith('--')) return `unknown option ${arg}`;
    else positional.push(arg);
  }
  const [form, out] = positional;
  if (form === undefined || out === undefined || positional.length > 2) return USAGE;
  return { form, out, ...(json !== undefined ? { json } : {}), ...(name !== undefined ? { name } : {}) };
}

export async function runXls2xform(args: string[]): Promise<number> {
  const parsed = parseArgs(args);
  if (typeof parsed === 'string') {
    process.stderr.write(`${parsed}\n`);
    return 2;
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(parsed.form);
  } catch (err) {
    process.stderr.write(`cannot read ${parsed.form}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const result = convertToXForm(bytes, { fileName: basename(parsed.form), ...(parsed.name !== undefined ? { rootName: parsed.name } : {}) });
  if (!result.ok) {
    for (const issue of result.errors) {
      const where = [issue.sheet && `sheet '${issue.sheet}'`, issue.row !== undefined && `row ${issue.row}`, issue.column && `column '${issue.column}'`]
        .filter(Boolean)
        .join(', ');
      process.stderr.write(`${issue.message}${where && !issue.message.includes('[row :') ? ` (${where})` : ''}\n`);
    }
    return 1;
  }
  await writeFile(parsed.out, result.xform);
  if (parsed.json !== undefined) await writeFile(parsed.json, `${JSON.stringify(result.formJson(), null, 2)}\n`);
  if (result.itemsetsCsv !== undefined) await writeFile(join(dirname(parsed.out), 'itemsets.csv'), result.itemsetsCsv);
  for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
  return 0;
}

// Not a top-level await: bin/converter.js bundles this file as a script, which cannot have one.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void runXls2xform(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
