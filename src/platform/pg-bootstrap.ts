// Before the pool opens: when DATABASE_URL names a database that does not exist yet, create it as
// `createdb` would (from the server's `postgres` maintenance database), and when the server cannot
// be used at all, stop with one line that says what to do instead of a driver's stack trace.
import { loadPg } from './pg-module.ts';

/** A reason not to start that one line explains; the CLI prints it without a stack trace. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

const INVALID_CATALOG_NAME = '3D000';
const DUPLICATE_DATABASE = '42P04';
const REFUSED_LOGIN = new Set(['28000', '28P01']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOENT']);

interface Target {
  readonly name: string | undefined;
  readonly user: string;
  /** host:port, for messages (never the password). */
  readonly where: string;
  readonly adminUrl: string;
}

function describe(databaseUrl: string): Target {
  const url = new URL(databaseUrl);
  const host = url.hostname || url.searchParams.get('host') || 'localhost';
  const port = url.port || '5432';
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || undefined;
  const user = decodeURIComponent(url.username) || process.env['PGUSER'] || process.env['USER'] || 'postgres';
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  return { name, user, where: `${host}:${port}`, adminUrl: admin.toString() };
}

function codeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Connects once and hangs up: resolves when the database answers, rejects with the driver's error. */
async function probe(connectionString: string): Promise<void> {
  const client = new (await loadPg()).Client({ connectionString, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
}

function unusable(target: Target, error: unknown): StartupError | undefined {
  const code = codeOf(error);
  if (code && UNREACHABLE.has(code)) {
    return new StartupError(`cannot reach PostgreSQL at ${target.where} (${code}): start it, or point DATABASE_URL at a running server`);
  }
  if (code && REFUSED_LOGIN.has(code)) {
    return new StartupError(`PostgreSQL at ${target.where} refused user "${target.user}" (${messageOf(error)}): fix DATABASE_URL's user or password`);
  }
  return undefined;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function createDatabase(target: Target & { name: string }, log: (line: string) => void): Promise<void> {
  const createdb = `createdb -h ${target.where.replace(/:(\d+)$/, ' -p $1')} -U postgres -O ${target.user} ${target.name}`;
  const admin = new (await loadPg()).Client({ connectionString: target.adminUrl, connectionTimeoutMillis: 10_000 });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${quoteIdentifier(target.name)}`);
    log(`created database "${target.name}" on ${target.where} (it did not exist)`);
  } catch (error) {
    // Another process (a second server starting at the same moment) created it first.
    if (codeOf(error) === DUPLICATE_DATABASE) return;
    throw new StartupError(
      `database "${target.name}" does not exist on ${target.where} and could not be created (${messageOf(error)}): run \`${createdb}\` (-U: any user allowed to create databases), then start again`,
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/**
 * Makes sure DATABASE_URL's database exists, creating it when it is missing and the user may.
 * Throws StartupError for what a person has to fix (server down, login refused, no right to create).
 */
export async function ensurePostgresDatabase(databaseUrl: string, log: (line: string) => void = () => undefined): Promise<void> {
  let target: Target;
  try {
    target = describe(databaseUrl);
  } catch {
    throw new StartupError('DATABASE_URL is not a URL: write it as postgres://user@host:5432/database');
  }
  try {
    await probe(databaseUrl);
    return;
  } catch (error) {
    const stop = unusable(target, error);
    if (stop) throw stop;
    if (codeOf(error) !== INVALID_CATALOG_NAME || !target.name) throw error;
  }
  await createDatabase({ ...target, name: target.name }, log);
}
