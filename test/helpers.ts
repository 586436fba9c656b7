// Test harness: a real database (in-memory PGlite, or a fresh database on the PostgreSQL server
// named by DATABASE_URL), the real app, and requests through Fastify's inject (full HTTP handling).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import type { AppDeps } from '../src/context.ts';
import { openRuntime, type Runtime } from '../src/runtime.ts';
import type { Clock } from '../src/platform/clock.ts';
import { MemoryMailer } from '../src/platform/mailer.ts';
import { pgliteTemplateBlob, postgresTemplateName } from './db-template.ts';

export interface TestServer {
  app: FastifyInstance;
  deps: AppDeps;
  runtime: Runtime;
  clock: TestClock;
  mailer: MemoryMailer;
  close(): Promise<void>;
}

/** A clock tests can move forward. */
export class TestClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}

/**
 * A new database on the PostgreSQL server: a copy of the run's migrated template when
 * scripts/run-tests.mjs made one (see db-template.ts), else an empty one that the app migrates.
 */
export async function createPostgresDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gather_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const template = postgresTemplateName();
  await client.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      // A closed pool's connections may still be saying goodbye: plain DROP waits for them (up to
      // 5 s); FORCE would cut them off, and a client told "terminating connection" fails the test.
      await c.query(`DROP DATABASE IF EXISTS ${name}`).catch(() => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      await c.end();
    },
  };
}

export async function startTestServer(overrides: Record<string, string> = {}): Promise<TestServer> {
  const serverUrl = process.env['DATABASE_URL'];
  const pgDb = serverUrl ? await createPostgresDatabase(serverUrl) : undefined;
  const env: NodeJS.ProcessEnv = {
    DATA_DIR: '/nonexistent-test-data-dir',
    SECRET_KEY: 'test-secret-key',
    BASE_URL: 'http://testserver',
    ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    ...overrides,
  };
  const config: Config = loadConfig(env);
  const clock = new TestClock();
  const mailer = new MemoryMailer();
  const runtime = await openRuntime(config, { pgliteDir: 'memory://', pgliteTemplate: await pgliteTemplateBlob(), clock, mailer });
  const app = await buildApp(runtime.deps);
  await app.ready();
  return {
    app,
    deps: runtime.deps,
    runtime,
    clock,
    mailer,
    close: async () => {
      await app.close();
      await runtime.close();
      await pgDb?.drop();
    },
  };
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

export interface TestUser {
  id: number;
  username: string;
  password: string;
  email: string;
  token: string;
  auth: { authorization: string };
}

let counter = 0;

/** Registers an account through the API and fetches its API token. */
export async function createUser(
  app: FastifyInstance,
  username: string,
  extra: Record<string, unknown> = {},
): Promise<TestUser> {
  counter += 1;
  const password = `Pw-${username}-${counter}-x9!`;
  const email = `${username}@example.org`;
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/profiles',
    payload: { username, first_name: username[0]?.toUpperCase() + username.slice(1), last_name: 'Tester', email, password, ...extra },
  });
  if (created.statusCode !== 201) throw new Error(`registration failed: ${created.statusCode} ${created.body}`);
  const me = await app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: basic(username, password) } });
  const body = me.json<{ api_token: string }>();
  const id = created.json<{ id: number }>().id;
  return { id, username: username.toLowerCase(), password, email, token: body.api_token, auth: { authorization: `Token ${body.api_token}` } };
}

export function json<T = Record<string, unknown>>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}

export interface TestDatabase {
  deps: AppDeps;
  runtime: Runtime;
  clock: TestClock;
  /** The fresh database's URL on PostgreSQL (DATABASE_URL set); undefined on in-memory PGlite. */
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

/** A migrated database and the app's dependencies, without the HTTP app (jobs, services). */
export async function startTestDatabase(overrides: Record<string, string> = {}): Promise<TestDatabase> {
  const serverUrl = process.env['DATABASE_URL'];
  const pgDb = serverUrl ? await createPostgresDatabase(serverUrl) : undefined;
  const config = loadConfig({
    DATA_DIR: '/nonexistent-test-data-dir',
    SECRET_KEY: 'test-secret-key',
    ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    ...overrides,
  });
  const clock = new TestClock();
  const runtime = await openRuntime(config, { pgliteDir: 'memory://', pgliteTemplate: await pgliteTemplateBlob(), clock });
  return {
    deps: runtime.deps,
    runtime,
    clock,
    databaseUrl: pgDb?.url,
    close: async () => {
      await runtime.close();
      await pgDb?.drop();
    },
  };
}

export interface MultipartFile {
  name: string;
  fileName: string;
  content: Uint8Array | string;
  contentType?: string;
}

/** A multipart/form-data body and its content-type header, built by hand for inject(). */
export function multipart(fields: Record<string, string>, files: MultipartFile[] = []): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----gather${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const file of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.fileName}"\r\nContent-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      typeof file.content === 'string' ? Buffer.from(file.content) : Buffer.from(file.content),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Publishes an XLSForm through POST /api/v1/forms as `user` and returns its form id. */
export async function publishForm(app: FastifyInstance, user: TestUser, file: MultipartFile): Promise<number> {
  const body = multipart({}, [file]);
  const res = await app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...user.auth, ...body.headers } });
  if (res.statusCode !== 201) throw new Error(`publishing ${file.fileName} answered ${res.statusCode}: ${res.body}`);
  return Number(res.json().formid);
}

/** Posts an OpenRosa submission: the instance XML as `xml_submission_file`, then any media files. */
export async function postSubmission(
  app: FastifyInstance,
  url: string,
  xml: string,
  headers: Record<string, string> = {},
  media: Array<{ name: string; content: Buffer; type: string }> = [],
): Promise<LightMyRequestResponse> {
  const body = multipart({}, [
    { name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' },
    ...media.map((m) => ({ name: m.name, fileName: m.name, content: m.content, contentType: m.type })),
  ]);
  return app.inject({ method: 'POST', url, payload: body.payload, headers: { ...headers, ...body.headers } });
}

/** A server on a data directory (and database) that outlives it, as a restarted process sees them. */
export interface ReopenableServer {
  readonly app: FastifyInstance;
  readonly runtime: Runtime;
  readonly deps: AppDeps;
  close(): Promise<void>;
}

/**
 * Where a restart test keeps its data: a fresh directory and, when DATABASE_URL is set, a fresh
 * database on that server. `open` starts a server on them (again after `close`), `remove` ends both.
 */
export async function restartableStorage(prefix: string): Promise<{
  open(overrides?: Record<string, string>): Promise<ReopenableServer>;
  remove(): Promise<void>;
}> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const serverUrl = process.env['DATABASE_URL'];
  const database = serverUrl ? await createPostgresDatabase(serverUrl) : undefined;
  return {
    open: async (overrides = {}) => {
      const config = loadConfig({ DATA_DIR: dataDir, SECRET_KEY: 'test-secret-key', BASE_URL: 'http://testserver', ...(database ? { DATABASE_URL: database.url } : {}), ...overrides });
      const runtime = await openRuntime(config, { pgliteDir: join(dataDir, 'db'), clock: new TestClock() });
      const app = await buildApp(runtime.deps);
      await app.ready();
      return {
        app,
        runtime,
        deps: runtime.deps,
        close: async () => {
          await app.close();
          await runtime.close();
        },
      };
    },
    remove: async () => {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
