// A scripted browser and OAuth client for the /o/ tests: keeps the /o/ cookies, fills the HTML
// forms (CSRF token included) and reads what the pages show.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export function formBody(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The text of `<code id="…">` on a page. */
export function codeById(html: string, id: string): string | undefined {
  return new RegExp(`<code id="${id}">([^<]*)</code>`).exec(html)?.[1];
}

export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    const [, name, value] = match;
    if (name !== undefined && value !== undefined) fields[name] = value.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));
  }
  return fields;
}

export class TestBrowser {
  readonly cookies = new Map<string, string>();

  constructor(private readonly app: FastifyInstance) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  #remember(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of response.cookies) {
      if (cookie.maxAge === 0 || cookie.value === '') this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.#remember(await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader() } }));
  }

  async post(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.#remember(
      await this.app.inject({ method: 'POST', url, headers: { ...FORM, cookie: this.cookieHeader() }, payload: formBody(fields) }),
    );
  }

  get csrf(): string {
    return this.cookies.get('gather_csrf') ?? '';
  }

  async signIn(username: string, password: string): Promise<LightMyRequestResponse> {
    await this.get('/o/login/');
    return this.post('/o/login/', { csrf_token: this.csrf, username, password, next: '/o/applications/' });
  }

  async register(fields: { name?: string; client_type?: string; redirect_uris: string }): Promise<{ clientId: string; clientSecret: string | undefined }> {
    const page = await this.get('/o/applications/register/');
    if (page.statusCode !== 200) throw new Error(`register page: ${page.statusCode}`);
    const res = await this.post('/o/applications/register/', {
      csrf_token: this.csrf,
      name: fields.name ?? 'Test app',
      client_type: fields.client_type ?? 'confidential',
      authorization_grant_type: 'authorization-code',
      redirect_uris: fields.redirect_uris,
    });
    const clientId = codeById(res.body, 'client_id');
    if (res.statusCode !== 201 || !clientId) throw new Error(`registration failed: ${res.statusCode} ${res.body}`);
    return { clientId, clientSecret: codeById(res.body, 'client_secret') };
  }

  /** GET /o/authorize with these parameters, then the consent form's decision; answers the last response. */
  async authorize(params: Record<string, string>, decision: 'allow' | 'deny' = 'allow'): Promise<LightMyRequestResponse> {
    const consent = await this.get(`/o/authorize/?${formBody(params)}`);
    if (consent.statusCode !== 200) return consent;
    return this.post('/o/authorize/', { ...hiddenFields(consent.body), decision });
  }
}

export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

/** POST /o/token with a form body and optional Basic client credentials. */
export async function tokenRequest(
  app: FastifyInstance,
  fields: Record<string, string>,
  authorization?: string,
  url = '/o/token',
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, headers: { ...FORM, ...(authorization ? { authorization } : {}) }, payload: formBody(fields) });
}

export function redirectParams(response: LightMyRequestResponse): URLSearchParams {
  const location = response.headers.location;
  if (typeof location !== 'string') throw new Error(`no redirect: ${response.statusCode} ${response.body}`);
  return new URL(location).searchParams;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
