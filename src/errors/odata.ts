// Refusals of the OData feed, in OData's error body: `{"error": {"code": "404", "message": "…"}}`.
import { body } from './shapes.ts';
import type { AppError } from './app-error.ts';

const odata = (status: number, message: string, headers: Readonly<Record<string, string>> = {}): AppError =>
  body(status, { error: { code: String(status), message } }, headers);

export const odataErrors = {
  /** A query option or $filter the feed cannot read, in the parser's words. */
  odataQueryInvalid: (message: string) => odata(400, message),
  /** A resource path that names nothing in the form's model. */
  odataResourceUnknown: (message: string) => odata(404, message),
  odataRecordNotReadable: (uuid: string) => odata(404, `No record uuid:${uuid} is readable here.`),
  odataEntityNotReadable: (path: string) => odata(404, `No entity ${path} is readable here.`),
  /** An anonymous caller refused: Excel and Power BI ask for a password on a Basic challenge. */
  odataNotAuthenticated: () => odata(401, 'Authentication credentials were not provided.', { 'www-authenticate': 'Basic realm="Gather", charset="UTF-8"' }),
  /** Any other refusal of the API, answered in OData's body with its status, message and headers. */
  odataRefusal: (error: AppError) => {
    const content = error.body;
    const message = !Array.isArray(content) && typeof content['detail'] === 'string' ? content['detail'] : error.message;
    return odata(error.status, message, error.headers);
  },
} as const;
