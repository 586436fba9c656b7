// The Google side of Sheets exports, over plain HTTPS: the OAuth consent address, the token
// endpoint (code exchange and refresh), and the Sheets REST API (create a spreadsheet, append
// rows). Every address comes from configuration, so tests and private deployments can point
// them elsewhere.
import type { Config } from '../../config.ts';

/** Scopes onadata asks for: files this app creates, and spreadsheets. */
const SCOPES = ['https://www.googleapis.com/auth/drive.file', 'https://www.googleapis.com/auth/spreadsheets'];

export class SpreadsheetProviderError extends Error {
  override name = 'SpreadsheetProviderError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface StoredCredential {
  access_token: string;
  refresh_token: string | null;
  /** Epoch milliseconds; the token is refreshed a minute before. */
  expires_at: number;
}

export function authorizationUrl(config: Config, redirectUri: string): string {
  const url = new URL(config.googleAuthorizeUrl);
  url.searchParams.set('client_id', config.googleClientId ?? '');
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', SCOPES.join(' '));
  url.searchParams.set('access_type', 'offline');
  url.searchParams.set('prompt', 'consent');
  return url.toString();
}

async function readJson(response: Response, what: string): Promise<Record<string, unknown>> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok || typeof body !== 'object' || body === null) {
    const detail = typeof body === 'object' && body !== null ? JSON.stringify(body).slice(0, 300) : text.slice(0, 300);
    throw new SpreadsheetProviderError(`${what} failed (HTTP ${response.status}): ${detail}`, response.status);
  }
  return body as Record<string, unknown>;
}

async function tokenRequest(config: Config, fields: Record<string, string>, now: number, previousRefresh: string | null, signal?: AbortSignal): Promise<StoredCredential> {
  const response = await fetch(config.googleTokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ client_id: config.googleClientId ?? '', client_secret: config.googleClientSecret, ...fields }).toString(),
    ...(signal ? { signal } : {}),
  });
  const body = await readJson(response, 'The authorization server');
  const accessToken = body['access_token'];
  if (typeof accessToken !== 'string' || accessToken === '') throw new SpreadsheetProviderError('The authorization server sent no access token.', 502);
  const expiresIn = typeof body['expires_in'] === 'number' ? body['expires_in'] : 3600;
  const refresh = typeof body['refresh_token'] === 'string' ? body['refresh_token'] : previousRefresh;
  return { access_token: accessToken, refresh_token: refresh, expires_at: now + expiresIn * 1000 };
}

export function exchangeCode(config: Config, code: string, redirectUri: string, now: number): Promise<StoredCredential> {
  return tokenRequest(config, { grant_type: 'authorization_code', code, redirect_uri: redirectUri }, now, null);
}

export function refreshCredential(config: Config, credential: StoredCredential, now: number, signal?: AbortSignal): Promise<StoredCredential> {
  if (!credential.refresh_token) throw new SpreadsheetProviderError('The Google authorization has expired; authorize again.', 401);
  return tokenRequest(config, { grant_type: 'refresh_token', refresh_token: credential.refresh_token }, now, credential.refresh_token, signal);
}

export function isUsable(credential: StoredCredential, now: number): boolean {
  return credential.expires_at - 60_000 > now;
}

export type SheetValue = string | number | boolean;

export class SheetsApi {
  constructor(
    private readonly baseUrl: string,
    private readonly accessToken: string,
    private readonly signal?: AbortSignal,
  ) {}

  private async call(path: string, body: unknown, what: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.accessToken}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      ...(this.signal ? { signal: this.signal } : {}),
    });
    return readJson(response, what);
  }

  /** A new spreadsheet with one sheet per name, each as wide as its header. */
  async createSpreadsheet(title: string, sheets: ReadonlyArray<{ name: string; columns: number }>): Promise<{ id: string; url: string }> {
    const body = await this.call(
      '/v4/spreadsheets',
      {
        properties: { title },
        sheets: sheets.map((s, index) => ({
          properties: { sheetId: index, title: s.name, index, gridProperties: { rowCount: 1, columnCount: Math.max(1, s.columns), frozenRowCount: 1 } },
        })),
      },
      'Creating the spreadsheet',
    );
    const id = body['spreadsheetId'];
    if (typeof id !== 'string') throw new SpreadsheetProviderError('The Sheets API returned no spreadsheet id.', 502);
    const url = typeof body['spreadsheetUrl'] === 'string' ? body['spreadsheetUrl'] : `https://docs.google.com/spreadsheets/d/${id}/edit`;
    return { id, url };
  }

  /** Appends rows below the sheet's last row; the API adds grid rows as needed. */
  async appendRows(spreadsheetId: string, sheetName: string, rows: readonly (readonly SheetValue[])[]): Promise<void> {
    const range = `'${sheetName.replace(/'/g, "''")}'!A1`;
    await this.call(
      `/v4/spreadsheets/${encodeURIComponent(spreadsheetId)}/values/${encodeURIComponent(range)}:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`,
      { majorDimension: 'ROWS', values: rows },
      `Writing rows to sheet "${sheetName}"`,
    );
  }
}
