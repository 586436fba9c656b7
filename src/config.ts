// Environment → a typed, frozen Config. Read once in the entry points and passed down.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly baseUrl: string | undefined;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly secretKey: Buffer;
  readonly tempTokenExpirySeconds: number;
  readonly maxLoginAttempts: number;
  readonly lockoutSeconds: number;
  /** Realm of HTTP Digest challenges; stored HA1 values are tied to it. */
  readonly digestRealm: string;
  readonly maxChangePasswordAttempts: number;
  readonly corsOrigins: readonly string[] | '*';
  readonly cacheMaxAgeSeconds: number;
  readonly bodyLimitBytes: number;
  readonly uploadLimitBytes: number;
  /** Largest OpenRosa submission request (instance and files together), announced to devices. */
  readonly submissionLimitBytes: number;
  readonly instanceLimitBytes: number;
  /** Time allowed to receive a request's headers. */
  readonly headersTimeoutMs: number;
  /** Longest pause allowed in an incoming request body before the request is answered 408. */
  readonly bodyIdleTimeoutMs: number;
  /** Time allowed to receive a whole request, headers and body (0: no limit). */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  readonly keepAliveTimeoutMs: number;
  /** Record imports of at least this many bytes run as a job (onadata's CSV_FILESIZE_IMPORT_ASYNC_THRESHOLD). */
  readonly importAsyncThresholdBytes: number;
  readonly logLevel: string;
  readonly disableCreatingUsers: boolean;
  readonly authCacheMs: number;
  /** How long GET list responses are reused by this process (0: never); writes here clear them at once. */
  readonly listCacheMs: number;
  readonly allowPrivateUrls: boolean;
  readonly remoteFetchTimeoutMs: number;
  /** REST service deliveries in flight at once in a process (src/modules/restservices). */
  readonly restServiceConcurrency: number;
  readonly restServiceTimeoutMs: number;
  /** How long a record's delivery is retried before it is dropped (and counted in the log). */
  readonly restServiceRetryMs: number;
  /** Job worker loops the server runs in-process; 0: none (run `gather worker` processes instead). */
  readonly workers: number;
  /** Helper threads that render a big CSV, XLSX or savzip export beside the main thread (PostgreSQL only); 0: none. */
  readonly exportThreads: number;
  /** Records a CSV export needs before it starts helper threads. */
  readonly exportThreadMinRecords: number;
  /** How often a running job writes its progress (besides when it reaches its total). */
  readonly jobProgressMs: number;
  /** How often the embedded database's upkeep looks for a table to VACUUM or ANALYZE; 0: never. */
  readonly pgliteUpkeepMs: number;
  /** HTTP server processes (node:cluster) on PostgreSQL; the embedded database allows only 1. */
  readonly webProcesses: number;
  readonly oauthAccessTokenSeconds: number;
  readonly oauthAuthorizationCodeSeconds: number;
  /** Unset: refresh tokens never expire (django-oauth-toolkit's default, kept by onadata). */
  readonly oauthRefreshTokenSeconds: number | undefined;
  /** Google Sheets exports: unset client id means the format is not offered. */
  readonly googleClientId: string | undefined;
  readonly googleClientSecret: string;
  readonly googleAuthorizeUrl: string;
  readonly googleTokenUrl: string;
  readonly googleSheetsApiUrl: string;
  /** Where Google sends the user back with the code; unset: the caller's redirect_uri or /api/v1/export/google_auth. */
  readonly googleRedirectUri: string | undefined;
  /** The data map's tile address template (`…/{z}/{x}/{y}.png`); empty: no tiles, points on a plain background. */
  readonly mapTileUrl: string;
}

/** Every setting with its default and meaning; `gather --help` prints this table. */
export const SETTINGS = [
  ['PORT', '8000', 'TCP port the server listens on'],
  ['HOST', '127.0.0.1', 'address the server binds to'],
  ['BASE_URL', '(from the request)', 'public address used in links, e.g. https://gather.example.org'],
  ['DATA_DIR', './data', 'embedded database, blobs and the generated secret key'],
  ['DATABASE_URL', '(unset: embedded PGlite)', 'postgres://user@host:5432/db to use a PostgreSQL server'],
  ['SECRET_KEY', '(generated into DATA_DIR)', 'key that seals stored tokens; keep it stable and private'],
  ['DEFAULT_TEMP_TOKEN_EXPIRY_TIME', '21600', 'lifetime of a TempToken in seconds'],
  ['MAX_LOGIN_ATTEMPTS', '10', 'failed logins per account and address before a lockout'],
  ['LOCKOUT_TIME', '1800', 'lockout duration in seconds'],
  ['DIGEST_REALM', 'Gather', 'realm of HTTP Digest challenges (changing it voids stored Digest credentials until the next password use)'],
  ['CORS_ORIGINS', '*', 'comma-separated origins allowed for cross-origin requests, or *'],
  ['CACHE_CONTROL_MAX_AGE', '30', 'max-age in seconds on cacheable GET responses'],
  ['BODY_LIMIT', '1048576', 'largest JSON or form body in bytes'],
  ['UPLOAD_LIMIT', '104857600', 'largest uploaded file in bytes'],
  ['INSTANCE_LIMIT', '5242880', 'largest submitted instance (xml_submission_file) in bytes'],
  ['SUBMISSION_LIMIT', '(twice UPLOAD_LIMIT)', 'largest OpenRosa submission request in bytes, files and instance together (devices split larger ones)'],
  ['HEADERS_TIMEOUT', '30', 'seconds allowed to receive a request\'s headers'],
  ['BODY_IDLE_TIMEOUT', '60', 'seconds a request body may pause (no byte arriving) before the request is answered 408'],
  ['REQUEST_TIMEOUT', '1800', 'seconds allowed to receive a whole request, body included (0: no limit)'],
  ['KEEP_ALIVE_TIMEOUT', '72', 'seconds an idle keep-alive connection stays open'],
  ['IMPORT_ASYNC_THRESHOLD', '100000', 'record imports (CSV, XLS, XLSX) of at least this many bytes run as a background job'],
  ['DISABLE_CREATING_USERS', 'false', 'refuse anonymous registration'],
  ['AUTH_CACHE_MS', '2000', 'how long a process may reuse a token lookup (0: never)'],
  ['WORKERS', '1', 'background job workers in the server process (0: none; use `gather worker`)'],
  ['EXPORT_THREADS', '1', 'helper threads rendering a big CSV, XLSX or savzip export beside the main thread, on PostgreSQL (0: none)'],
  ['EXPORT_THREAD_MIN_RECORDS', '20000', 'records a CSV, XLSX or savzip export needs before it uses helper threads'],
  ['PGLITE_UPKEEP_INTERVAL', '60', 'seconds between looks for a table of the embedded database to VACUUM or ANALYZE, one at a time (0: never)'],
  ['WEB_PROCESSES', '1', 'HTTP server processes sharing the port, or auto (one per CPU); more than 1 needs DATABASE_URL'],
  ['OAUTH2_ACCESS_TOKEN_EXPIRE_SECONDS', '36000', 'lifetime of an OAuth 2 access token'],
  ['OAUTH2_AUTHORIZATION_CODE_EXPIRE_SECONDS', '60', 'lifetime of an OAuth 2 authorization code'],
  ['OAUTH2_REFRESH_TOKEN_EXPIRE_SECONDS', '(unset: never)', 'lifetime of an OAuth 2 refresh token'],
  ['ALLOW_PRIVATE_URLS', 'false', 'let xls_url fetch from loopback and private-network addresses'],
  ['REMOTE_FETCH_TIMEOUT', '30', 'seconds allowed for fetching an xls_url'],
  ['REST_SERVICE_CONCURRENCY', '4', 'REST service deliveries in flight at once per process (0: none in this process)'],
  ['REST_SERVICE_TIMEOUT', '10', 'seconds a REST service has to answer a delivery'],
  ['REST_SERVICE_RETRY_HOURS', '24', 'hours a failing REST service delivery is retried before it is dropped'],
  ['GOOGLE_CLIENT_ID', '(unset: no gsheets exports)', 'OAuth client id for Google Sheets exports'],
  ['GOOGLE_CLIENT_SECRET', '(unset)', 'OAuth client secret for Google Sheets exports'],
  ['GOOGLE_REDIRECT_URI', '(unset: BASE_URL/api/v1/export/google_auth)', 'where Google returns the authorization code'],
  ['GOOGLE_AUTHORIZE_URL', 'https://accounts.google.com/o/oauth2/v2/auth', 'Google OAuth consent address'],
  ['GOOGLE_TOKEN_URL', 'https://oauth2.googleapis.com/token', 'Google OAuth token address'],
  ['GOOGLE_SHEETS_API_URL', 'https://sheets.googleapis.com', 'base address of the Google Sheets REST API'],
  ['MAP_TILE_URL', '(unset: no tiles)', 'tile address template for the data map, e.g. https://tiles.example.org/{z}/{x}/{y}.png'],
  ['LOG_LEVEL', 'info', 'fatal, error, warn, info, debug, trace or silent'],
] as const;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** MAP_TILE_URL: an http(s) address (or a path on this server) with {z}, {x} and {y} in it. */
function mapTileUrl(env: NodeJS.ProcessEnv): string {
  const raw = (env['MAP_TILE_URL'] ?? '').trim();
  if (raw === '') return '';
  const usable = (/^https?:\/\/[^/\s]+\//i.test(raw) || /^\/[^/]/.test(raw)) && ['{z}', '{x}', '{y}'].every((part) => raw.includes(part)) && !/[\s'";]/.test(raw);
  if (!usable) throw new Error(`MAP_TILE_URL must be an http(s) address or a path with {z}, {x} and {y}, got "${raw}"`);
  return raw;
}

/** `auto`: one per CPU on PostgreSQL, 1 on the embedded database (it allows one process). */
function webProcesses(env: NodeJS.ProcessEnv): number {
  if ((env['WEB_PROCESSES'] ?? '').trim().toLowerCase() === 'auto') return env['DATABASE_URL'] ? availableParallelism() : 1;
  return Math.max(1, integer(env, 'WEB_PROCESSES', 1));
}

/**
 * Receiving a request is bounded three ways: its headers, each pause in its body, and the whole.
 * A phone uploading a photo on a poor link sends slowly but steadily, so the pause is the tight
 * limit and the whole is loose. Node requires the headers' limit to fit in the whole's.
 */
function timeouts(env: NodeJS.ProcessEnv): Pick<Config, 'headersTimeoutMs' | 'bodyIdleTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs'> {
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT', 1800) * 1000;
  const headersTimeoutMs = Math.max(1, integer(env, 'HEADERS_TIMEOUT', 30)) * 1000;
  return {
    headersTimeoutMs: requestTimeoutMs > 0 ? Math.min(headersTimeoutMs, requestTimeoutMs) : headersTimeoutMs,
    bodyIdleTimeoutMs: Math.max(1, integer(env, 'BODY_IDLE_TIMEOUT', 60)) * 1000,
    requestTimeoutMs,
    keepAliveTimeoutMs: Math.max(1, integer(env, 'KEEP_ALIVE_TIMEOUT', 72)) * 1000,
  };
}

function secretKey(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  const given = env['SECRET_KEY'];
  if (given) return Buffer.from(given, 'utf8');
  const path = join(dataDir, 'secret_key');
  if (existsSync(path)) return Buffer.from(readFileSync(path, 'utf8').trim(), 'utf8');
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  writeFileSync(path, key + '\n', { mode: 0o600, flag: 'wx' });
  return Buffer.from(key, 'utf8');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env['DATA_DIR'] || './data');
  const origins = (env['CORS_ORIGINS'] ?? '*').trim();
  return Object.freeze({
    port: integer(env, 'PORT', 8000),
    host: env['HOST'] || '127.0.0.1',
    baseUrl: env['BASE_URL'] ? env['BASE_URL'].replace(/\/+$/, '') : undefined,
    dataDir,
    databaseUrl: env['DATABASE_URL'] || undefined,
    secretKey: secretKey(env, dataDir),
    tempTokenExpirySeconds: integer(env, 'DEFAULT_TEMP_TOKEN_EXPIRY_TIME', 21600),
    maxLoginAttempts: integer(env, 'MAX_LOGIN_ATTEMPTS', 10),
    lockoutSeconds: integer(env, 'LOCKOUT_TIME', 1800),
    digestRealm: env['DIGEST_REALM'] || 'Gather',
    maxChangePasswordAttempts: 10,
    corsOrigins: origins === '*' ? '*' : origins.split(',').map((o) => o.trim()).filter(Boolean),
    cacheMaxAgeSeconds: integer(env, 'CACHE_CONTROL_MAX_AGE', 30),
    bodyLimitBytes: integer(env, 'BODY_LIMIT', 1_048_576),
    uploadLimitBytes: integer(env, 'UPLOAD_LIMIT', 104_857_600),
    // One largest file beside one largest instance.
    submissionLimitBytes: integer(env, 'SUBMISSION_LIMIT', 2 * integer(env, 'UPLOAD_LIMIT', 104_857_600)),
    // An instance is parsed in memory: 5 MB (about 100,000 answers) costs about 40 MB to parse,
    // which keeps an open account's anonymous submissions within the memory they may raise.
    instanceLimitBytes: integer(env, 'INSTANCE_LIMIT', 5_242_880),
    ...timeouts(env),
    importAsyncThresholdBytes: integer(env, 'IMPORT_ASYNC_THRESHOLD', 100_000),
    logLevel: env['LOG_LEVEL'] || 'info',
    disableCreatingUsers: /^(1|true|yes)$/i.test(env['DISABLE_CREATING_USERS'] ?? ''),
    authCacheMs: integer(env, 'AUTH_CACHE_MS', 2000),
    listCacheMs: integer(env, 'LIST_CACHE_MS', 2000),
    allowPrivateUrls: /^(1|true|yes)$/i.test(env['ALLOW_PRIVATE_URLS'] ?? ''),
    remoteFetchTimeoutMs: integer(env, 'REMOTE_FETCH_TIMEOUT', 30) * 1000,
    restServiceConcurrency: integer(env, 'REST_SERVICE_CONCURRENCY', 4),
    restServiceTimeoutMs: Math.max(1, integer(env, 'REST_SERVICE_TIMEOUT', 10)) * 1000,
    restServiceRetryMs: integer(env, 'REST_SERVICE_RETRY_HOURS', 24) * 3_600_000,
    workers: integer(env, 'WORKERS', 1),
    exportThreads: integer(env, 'EXPORT_THREADS', 1),
    exportThreadMinRecords: integer(env, 'EXPORT_THREAD_MIN_RECORDS', 20_000),
    jobProgressMs: integer(env, 'JOB_PROGRESS_MS', 1000),
    pgliteUpkeepMs: integer(env, 'PGLITE_UPKEEP_INTERVAL', 60) * 1000,
    webProcesses: webProcesses(env),
    oauthAccessTokenSeconds: Math.max(1, integer(env, 'OAUTH2_ACCESS_TOKEN_EXPIRE_SECONDS', 36000)),
    oauthAuthorizationCodeSeconds: Math.max(1, integer(env, 'OAUTH2_AUTHORIZATION_CODE_EXPIRE_SECONDS', 60)),
    oauthRefreshTokenSeconds: integer(env, 'OAUTH2_REFRESH_TOKEN_EXPIRE_SECONDS', 0) || undefined,
    googleClientId: env['GOOGLE_CLIENT_ID'] || undefined,
    googleClientSecret: env['GOOGLE_CLIENT_SECRET'] ?? '',
    googleAuthorizeUrl: env['GOOGLE_AUTHORIZE_URL'] || 'https://accounts.google.com/o/oauth2/v2/auth',
    googleTokenUrl: env['GOOGLE_TOKEN_URL'] || 'https://oauth2.googleapis.com/token',
    googleSheetsApiUrl: (env['GOOGLE_SHEETS_API_URL'] || 'https://sheets.googleapis.com').replace(/\/+$/, ''),
    googleRedirectUri: env['GOOGLE_REDIRECT_URI'] || undefined,
    mapTileUrl: mapTileUrl(env),
  });
}
