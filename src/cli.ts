// `gather <command>`: start, worker, migrate, xls2xform, help.
import { loadConfig, SETTINGS } from './config.ts';
import { StartupError } from './platform/pg-bootstrap.ts';

const USAGE = `usage: gather <command>

commands:
  start                               run the HTTP server (migrates first)
  worker                              run background job workers only (WORKERS of them, at least 1)
  migrate                             apply database migrations and exit
  xls2xform FORM OUT.xml [--json OUT.json] [--name ROOT]
                                      convert an XLSForm to an ODK XForm
  help                                this text

configuration (environment variables):
${SETTINGS.map(([name, fallback, meaning]) => `  ${name.padEnd(32)} ${meaning} [${fallback}]`).join('\n')}
`;

export async function runCli(args: string[]): Promise<void> {
  try {
    await runCommand(args);
  } catch (error) {
    // What a person has to fix is said in one line; anything else is a bug, with its stack trace.
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`gather: ${error.message}\n`);
    process.exitCode = 1;
  }
}

async function runCommand(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  switch (command) {
    case 'start': {
      const { startServer } = await import('./main.ts');
      await startServer(loadConfig());
      return;
    }
    case 'worker': {
      const { runWorkerProcess } = await import('./worker.ts');
      await runWorkerProcess(loadConfig());
      return;
    }
    case 'migrate': {
      const { openRuntime } = await import('./runtime.ts');
      const runtime = await openRuntime(loadConfig(), { log: (line) => console.log(line) });
      await runtime.close();
      console.log('database is up to date');
      return;
    }
    case 'xls2xform': {
      const { runXls2xform } = await import('../packages/xlsform/src/cli.ts');
      process.exitCode = await runXls2xform(rest);
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`unknown command: ${command}\n\n${USAGE}`);
      process.exitCode = 2;
  }
}
