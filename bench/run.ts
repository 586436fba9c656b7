// `npm run bench -- NAME [args]`: runs bench/NAME.ts, which prints its own figures.
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const [name, ...args] = process.argv.slice(2);
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3));
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- NAME [args]\navailable: ${available.join(', ')}`);
  process.exit(2);
}
const file = join(here, `${name}.ts`);
if (!existsSync(file)) process.exit(2);
const mod = (await import(pathToFileURL(file).href)) as { main: (args: string[]) => Promise<void> };
await mod.main(args);
