// Google Sheets exports: the user's authorization (sealed like other secrets), and the job's
// writing of the sectioned layout (main sheet plus one per repeat) through the Sheets API.
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { requireUser } from '../../access/index.ts';
import type { Cell } from '../../lib/writers/layout/types.ts';
import { isExportDate } from '../../lib/writers/layout/types.ts';
import { planSections } from '../../lib/writers/layout/sections.ts';
import type { ExportOptions } from './options.ts';
import type { ExportTarget } from './render.ts';
import { openExportSource } from './source.ts';
import { findSpreadsheetCredential, saveSpreadsheetCredential } from './stored-exports-repository.ts';
import {
  authorizationUrl,
  exchangeCode,
  isUsable,
  refreshCredential,
  SheetsApi,
  SpreadsheetProviderError,
  type SheetValue,
  type StoredCredential,
} from './gsheets-client.ts';

/** Rows per append request: well under the API's request size limit for typical forms. */
const ROWS_PER_BATCH = 1000;

function redirectUriFor(ctx: RequestContext, requested: string | undefined): string {
  return requested || ctx.config.googleRedirectUri || `${ctx.baseUrl}/api/v1/export/google_auth`;
}

async function storedCredential(ctx: RequestContext, userId: number): Promise<StoredCredential | undefined> {
  const sealed = await findSpreadsheetCredential(ctx.db, userId);
  if (!sealed) return undefined;
  try {
    return JSON.parse(ctx.sealer.open(sealed)) as StoredCredential;
  } catch {
    // Sealed under another SECRET_KEY: as good as none.
    return undefined;
  }
}

async function saveCredential(ctx: RequestContext, userId: number, credential: StoredCredential): Promise<void> {
  await saveSpreadsheetCredential(ctx.db, userId, ctx.sealer.seal(JSON.stringify(credential)), ctx.clock.now());
}

/** A 403 with the consent address unless the user has a credential that works or can be refreshed. */
export async function requireSpreadsheetCredential(ctx: RequestContext, userId: number, redirectUri: string | undefined): Promise<void> {
  const credential = await storedCredential(ctx, userId);
  if (credential && (isUsable(credential, ctx.clock.now().getTime()) || credential.refresh_token)) return;
  throw errors.spreadsheetAuthorizationNeeded(authorizationUrl(ctx.config, redirectUriFor(ctx, redirectUri)));
}

/** GET /api/v1/export/google_auth?code=…: exchanges the code and stores the credential. */
export async function completeGoogleAuthorization(ctx: RequestContext, code: string | undefined, redirectUri: string | undefined): Promise<Record<string, string>> {
  const actor = requireUser(ctx.actor);
  if (!ctx.config.googleClientId) throw errors.exportFormatNotSupported();
  if (!code) throw errors.googleCodeMissing();
  let credential: StoredCredential;
  try {
    credential = await exchangeCode(ctx.config, code, redirectUriFor(ctx, redirectUri), ctx.clock.now().getTime());
  } catch (error) {
    if (error instanceof SpreadsheetProviderError) throw errors.spreadsheetProviderRefused(error.message);
    throw error;
  }
  await saveCredential(ctx, actor.id, credential);
  return { details: 'Google authorization successful' };
}

async function accessToken(ctx: RequestContext, userId: number, signal: AbortSignal): Promise<string> {
  const credential = await storedCredential(ctx, userId);
  if (!credential) throw new SpreadsheetProviderError('Google authorization needed.', 401);
  const now = ctx.clock.now().getTime();
  if (isUsable(credential, now)) return credential.access_token;
  const fresh = await refreshCredential(ctx.config, credential, now, signal);
  await saveCredential(ctx, userId, fresh);
  return fresh.access_token;
}

/** Sheets cells: dates as their ISO text, empty cells as empty strings. */
function sheetValue(cell: Cell): SheetValue {
  if (cell === null) return '';
  if (isExportDate(cell)) return cell.kind === 'datetime' ? cell.iso.replace('T', ' ') : cell.iso;
  return cell;
}

/** Writes every section of the export as a sheet of a new spreadsheet; answers its title and address. */
export async function writeGoogleSheet(ctx: RequestContext, target: ExportTarget, options: ExportOptions, signal: AbortSignal): Promise<{ title: string; url: string }> {
  const user = requireUser(ctx.actor);
  const token = await accessToken(ctx, user.id, signal);
  const api = new SheetsApi(ctx.config.googleSheetsApiUrl, token, signal);
  const source = await openExportSource(ctx, target, options, ctx.baseUrl);
  // Rows are appended with valueInputOption=RAW, which stores text as text and never parses a
  // formula: answers like `=1+2` are sent as answered.
  const layout = planSections(source.form, options, { baseUrl: ctx.baseUrl }, { parentNames: 'sheet', cellText: 'as-answered' }, await source.osmTagKeys());
  const title = target.title;
  const sheet = await api.createSpreadsheet(title, layout.sections.map((s) => ({ name: s.sheetName, columns: s.columns.length })));
  for (const section of layout.sections) {
    const builder = layout.rowBuilder(section);
    // Header rows first (labels and the HXL row when the options ask for them), then a pass over the records.
    let batch: SheetValue[][] = section.headerRows.map((row) => [...row]);
    for await (const record of source.records()) {
      for (const row of builder.rows(record)) {
        batch.push(row.map(sheetValue));
        if (batch.length >= ROWS_PER_BATCH) {
          await api.appendRows(sheet.id, section.sheetName, batch);
          batch = [];
        }
      }
    }
    if (batch.length > 0) await api.appendRows(sheet.id, section.sheetName, batch);
  }
  return { title, url: sheet.url };
}
