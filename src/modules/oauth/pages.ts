// The /o/ HTML pages: plain, accessible (labelled fields, one h1, lang), no external assets.
// Every interpolated value goes through `escapeHtml`.
import type { ApplicationRow } from './repository.ts';
import { SCOPES, type Scope } from './model.ts';
import type { ApplicationForm, ApplicationFormErrors } from './service.ts';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
label{display:block;margin-top:1rem;font-weight:600}
input[type=text],input[type=password],input[type=url],select,textarea{display:block;width:100%;padding:.4rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;margin-right:.5rem;padding:.4rem 1rem;font:inherit}
.error{color:#a40000}
code{word-break:break-all}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem;border-bottom:1px solid #ccc;vertical-align:top}
nav form{display:inline}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;

function layout(title: string, body: string, signedInAs?: string): string {
  const nav = signedInAs
    ? `<nav aria-label="Account"><p>Signed in as <strong>${escapeHtml(signedInAs)}</strong>.
<a href="/o/applications/">Your applications</a></p></nav>`
    : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Gather</title>
<style>${STYLE}</style>
</head>
<body>
${nav}
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

function csrfField(csrf: string): string {
  return `<input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">`;
}

function errorText(id: string, message: string | undefined): string {
  return message ? `<p class="error" id="${id}" role="alert">${escapeHtml(message)}</p>` : '';
}

export function loginPage(opts: { csrf: string; next: string; login?: string; error?: string }): string {
  const described = opts.error ? ' aria-describedby="login-error"' : '';
  return layout(
    'Sign in',
    `<p>Sign in with your Gather account.</p>
${errorText('login-error', opts.error)}
<form method="post" action="/o/login/">
${csrfField(opts.csrf)}
<input type="hidden" name="next" value="${escapeHtml(opts.next)}">
<label for="username">Username or e-mail</label>
<input type="text" id="username" name="username" autocomplete="username" required value="${escapeHtml(opts.login ?? '')}"${described}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${described}>
<button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(opts: {
  csrf: string;
  username: string;
  application: ApplicationRow;
  scopes: readonly Scope[];
  params: Readonly<Record<string, string>>;
}): string {
  const hidden = Object.entries(opts.params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const scopes = opts.scopes.map((s) => `<li><strong>${escapeHtml(s)}</strong>: ${escapeHtml(SCOPES[s])}</li>`).join('\n');
  return layout(
    `Authorize ${opts.application.name}?`,
    `<p>The application <strong>${escapeHtml(opts.application.name)}</strong> asks to act for your account
<strong>${escapeHtml(opts.username)}</strong> with these permissions:</p>
<ul>
${scopes}
</ul>
<p>It will be sent back to <code>${escapeHtml(opts.params['redirect_uri'] ?? '')}</code>.</p>
<form method="post" action="/o/authorize/">
${csrfField(opts.csrf)}
${hidden}
<button type="submit" name="decision" value="allow">Authorize</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</form>`,
    opts.username,
  );
}

export function errorPage(title: string, message: string, signedInAs?: string): string {
  return layout(title, `<p role="alert">${escapeHtml(message)}</p>`, signedInAs);
}

export function applicationsPage(opts: { csrf: string; username: string; applications: readonly ApplicationRow[] }): string {
  const rows = opts.applications
    .map(
      (a) => `<tr>
<td>${escapeHtml(a.name)}</td>
<td><code>${escapeHtml(a.client_id)}</code></td>
<td>${escapeHtml(a.client_type)}</td>
<td>${a.redirect_uris.split(' ').map((u) => `<code>${escapeHtml(u)}</code>`).join('<br>')}</td>
<td><form method="post" action="/o/applications/${a.id}/delete/">${csrfField(opts.csrf)}
<button type="submit" aria-label="Delete ${escapeHtml(a.name)}">Delete</button></form></td>
</tr>`,
    )
    .join('\n');
  const table = opts.applications.length
    ? `<table>
<caption>Applications you registered</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Client id</th><th scope="col">Client type</th><th scope="col">Redirect URIs</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
    : '<p>You have registered no applications.</p>';
  return layout(
    'Your applications',
    `${table}
<p><a href="/o/applications/register/">Register a new application</a></p>
<form method="post" action="/o/logout/">${csrfField(opts.csrf)}<button type="submit">Sign out</button></form>`,
    opts.username,
  );
}

function option(value: string, label: string, selected: string): string {
  return `<option value="${escapeHtml(value)}"${value === selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;
}

export function registerPage(opts: { csrf: string; username: string; form: ApplicationForm; problems: ApplicationFormErrors }): string {
  const { form, problems } = opts;
  const describedBy = (field: keyof ApplicationForm) => (problems[field] ? ` aria-describedby="${field}-error" aria-invalid="true"` : '');
  return layout(
    'Register an application',
    `<p>A registered application can ask Gather users for access to their account, without their password.</p>
<form method="post" action="/o/applications/register/">
${csrfField(opts.csrf)}
<label for="name">Name</label>
<input type="text" id="name" name="name" required maxlength="255" value="${escapeHtml(form.name)}"${describedBy('name')}>
${errorText('name-error', problems.name)}
<label for="client_type">Client type</label>
<select id="client_type" name="client_type"${describedBy('client_type')}>
${option('confidential', 'Confidential (a server that keeps a secret)', form.client_type)}
${option('public', 'Public (a browser or mobile app; must use PKCE)', form.client_type)}
</select>
${errorText('client_type-error', problems.client_type)}
<label for="authorization_grant_type">Authorization grant type</label>
<select id="authorization_grant_type" name="authorization_grant_type"${describedBy('authorization_grant_type')}>
${option('authorization-code', 'Authorization code', form.authorization_grant_type)}
</select>
${errorText('authorization_grant_type-error', problems.authorization_grant_type)}
<label for="redirect_uris">Redirect URIs (separated by spaces)</label>
<textarea id="redirect_uris" name="redirect_uris" rows="3" required${describedBy('redirect_uris')}>${escapeHtml(form.redirect_uris)}</textarea>
${errorText('redirect_uris-error', problems.redirect_uris)}
<button type="submit">Register</button>
</form>
<p><a href="/o/applications/">Back to your applications</a></p>`,
    opts.username,
  );
}

export function registeredPage(opts: { username: string; application: ApplicationRow; clientSecret: string | undefined }): string {
  const secret = opts.clientSecret
    ? `<dt>Client secret</dt>
<dd><code id="client_secret">${escapeHtml(opts.clientSecret)}</code></dd>`
    : '';
  return layout(
    'Application registered',
    `<p>Copy the credentials now: ${opts.clientSecret ? 'the client secret is stored only as a hash and <strong>will not be shown again</strong>.' : 'a public client has no secret and must use PKCE.'}</p>
<dl>
<dt>Name</dt><dd>${escapeHtml(opts.application.name)}</dd>
<dt>Client id</dt>
<dd><code id="client_id">${escapeHtml(opts.application.client_id)}</code></dd>
${secret}
<dt>Redirect URIs</dt><dd>${opts.application.redirect_uris.split(' ').map((u) => `<code>${escapeHtml(u)}</code>`).join('<br>')}</dd>
</dl>
<p><a href="/o/applications/">Your applications</a></p>`,
    opts.username,
  );
}
