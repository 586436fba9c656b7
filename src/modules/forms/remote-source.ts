// XLSForms named by URL (xls_url, dropbox_xls_url).
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { fetchRemoteFile, RemoteFetchError } from '../../platform/remote-fetch.ts';
import type { FormSource } from './publish.ts';

/** Dropbox share links serve an HTML page unless asked for the file itself. */
function directDropboxUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (/(^|\.)dropbox\.com$/i.test(parsed.hostname)) parsed.searchParams.set('dl', '1');
    return parsed.toString();
  } catch {
    return url;
  }
}

export async function fetchXlsFormFromUrl(ctx: RequestContext, url: string, dropbox: boolean): Promise<FormSource> {
  try {
    const file = await fetchRemoteFile(dropbox ? directDropboxUrl(url) : url, {
      maxBytes: ctx.config.uploadLimitBytes,
      timeoutMs: ctx.config.remoteFetchTimeoutMs,
      allowPrivateAddresses: ctx.config.allowPrivateUrls,
    });
    return { fileName: file.fileName, bytes: file.bytes, contentType: file.contentType };
  } catch (error) {
    const reason = error instanceof RemoteFetchError ? error.message : 'the download failed';
    throw errors.xlsFormDownloadFailed(url, reason);
  }
}
