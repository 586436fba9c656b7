// `npm run xlsform:corpus`: converts every form of ../shared/xlsform-corpus/forms
// into a temp directory (NAME.xml + NAME.json, or NAME.error.txt) and runs the
// corpus's compare.py over them, exiting with its status.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { convert } from '../packages/xlsform/src/index.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const corpus = resolve(repoRoot, '../shared/xlsform-corpus');
const formsDir = join(corpus, 'forms');
const outDir = process.env['XLSFORM_CORPUS_OUT'] ?? mkdtempSync(join(tmpdir(), 'xlsform-corpus-'));
const extraArgs = process.argv.slice(2);

for (const name of readdirSync(formsDir).sort()) {
  const result = convert(readFileSync(join(formsDir, name)), { fileName: name });
  if (result.ok) {
    writeFileSync(join(outDir, `${name}.xml`), result.xform);
    writeFileSync(join(outDir, `${name}.json`), JSON.stringify(result.formJson, null, 2));
    writeFileSync(join(outDir, `${name}.warnings.txt`), result.warnings.join('\n'));
    if (result.itemsetsCsv !== undefined) writeFileSync(join(outDir, `${name}.itemsets.csv`), result.itemsetsCsv);
  } else {
    writeFileSync(join(outDir, `${name}.error.txt`), `${result.errors.map((e) => e.message).join('\n')}\n`);
  }
}

console.log(`outputs in ${outDir}`);
const compare = spawnSync('python3', [join(corpus, 'compare.py'), outDir, '--json', ...extraArgs], { encoding: 'utf8' });
// compare.py's last line is the summary: "N identical, M differ, K missing, E expected-errors-matched".
process.stdout.write(compare.stdout);
process.stderr.write(compare.stderr);
process.exit(compare.status ?? 1);
