// The web app's build for tests that serve it: built once (bin/build-web.js), and again only when
// web/ changed since, as `npm start` does.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../bin/build-web.js', import.meta.url));

export function ensureWebBuild(): void {
  const result = spawnSync(process.execPath, [script, '--quiet'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 });
  if (result.status !== 0) throw new Error(`building the web app failed (${result.error?.message ?? `exit code ${String(result.status)}`})`);
}
