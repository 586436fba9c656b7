// Publishing from an address in Chromium: the person types the XLSForm's address, the server
// fetches it (here from a local server playing the remote host, allowed by ALLOW_PRIVATE_URLS)
// and the form appears in the project; an address that answers 404 is refused with a message.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUser, startTestServer, type TestServer } from '../helpers.ts';
import { csvForm } from '../fixtures/forms.ts';
import { ensureWebBuild } from '../web-build.ts';
import { browse, closeBrowser, skipWithoutChromium as skip } from './chromium.ts';

let server: TestServer;
let gather: string;
let host: Server;
let hostUrl: string;

before(async () => {
  if (skip) return;
  ensureWebBuild();
  server = await startTestServer({ ALLOW_PRIVATE_URLS: 'true' });
  const port = (await server.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
  gather = `http://127.0.0.1:${port}`;
  host = createServer((request, response) => {
    if (request.url === '/forms/water_points.csv') {
      response.writeHead(200, { 'content-type': 'text/csv' }).end(csvForm({ id: 'water_points', title: 'Water points' }));
    } else {
      response.writeHead(404).end('not here');
    }
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
});

after(async () => {
  if (skip) return;
  await new Promise((resolve) => host.close(resolve));
  await closeBrowser();
  await server.close();
});

test('a form is published from an address typed on the project page', { skip, timeout: 120_000 }, async () => {
  const user = await createUser(server.app, 'mwangi');
  const created = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: user.auth, payload: { name: 'Water' } });
  assert.equal(created.statusCode, 201, created.body);
  const projectId = created.json<{ projectid: number }>().projectid;
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await page.goto(`${gather}/login?next=${encodeURIComponent(`/projects/${projectId}`)}`);
    await page.getByRole('textbox', { name: 'Username or e-mail' }).fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const address = page.getByRole('textbox', { name: 'Or publish from an address' });
    await address.fill(`${hostUrl}/forms/missing.csv`);
    await page.getByRole('button', { name: 'Publish from address' }).click();
    await page.getByText('The form could not be published.').waitFor();
    await address.fill(`${hostUrl}/forms/water_points.csv`);
    await page.getByRole('button', { name: 'Publish from address' }).click();
    await page.getByRole('status').filter({ hasText: 'Published “Water points” (water_points).' }).waitFor();
    const forms = await server.app.inject({ method: 'GET', url: `/api/v1/projects/${projectId}/forms`, headers: user.auth });
    assert.deepEqual(forms.json<{ id_string: string }[]>().map((f) => f.id_string), ['water_points']);
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});
