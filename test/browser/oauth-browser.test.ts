// The OAuth 2 authorization-code flow in a real browser: headless Chromium (Debian's `chromium`)
// driven by playwright-core. A developer registers a client through the HTML pages; a user opens
// the authorize URL, signs in, approves and lands on the client's local redirect page; the test,
// as the client, exchanges the code and calls the API with the Bearer token.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createUser, startTestServer, type TestServer } from '../helpers.ts';
import { basicAuth, formBody, tokenRequest } from '../oauth-client.ts';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing, skipWithoutChromium as skip } from './chromium.ts';

const missing = chromiumMissing;

let server: TestServer;
let gather: string;
let callback: Server;
let callbackUrl: string;

function listen(httpServer: Server): Promise<number> {
  return new Promise((resolve) => httpServer.listen(0, '127.0.0.1', () => resolve((httpServer.address() as AddressInfo).port)));
}

before(async () => {
  if (skip) return;
  server = await startTestServer();
  const port = (await server.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
  gather = `http://127.0.0.1:${port}`;
  // The third-party client's redirect page.
  callback = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!DOCTYPE html><html lang="en"><title>Client</title><h1>Back at the client</h1></html>');
  });
  callbackUrl = `http://127.0.0.1:${await listen(callback)}/callback`;
});

after(async () => {
  if (skip) return;
  await new Promise((resolve) => callback.close(resolve));
  await server.close();
});

test('a user signs in and approves in Chromium; the client exchanges the code and calls /api/v1/user with Bearer', { skip, timeout: 120_000 }, async () => {
  assert.ok(!missing, `${CHROMIUM} is missing: .ci/run installs the Debian packages chromium and chromium-driver`);
  const developer = await createUser(server.app, 'devon');
  const user = await createUser(server.app, 'amina');
  const profile = mkdtempSync(join(tmpdir(), 'gather-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = context.pages()[0] ?? (await context.newPage());

    // The developer registers a confidential client and copies its credentials.
    await page.goto(`${gather}/o/applications/register/`);
    assert.match(page.url(), /\/o\/login\//);
    await page.getByLabel('Username or e-mail').fill(developer.username);
    await page.getByLabel('Password').fill(developer.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/o\/applications\/register\/$/);
    await page.getByLabel('Name').fill('Browser test client');
    await page.getByLabel('Client type').selectOption('confidential');
    await page.getByLabel('Redirect URIs').fill(callbackUrl);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Application registered' }).waitFor();
    const clientId = (await page.locator('#client_id').textContent()) ?? '';
    const clientSecret = (await page.locator('#client_secret').textContent()) ?? '';
    assert.ok(clientId && clientSecret);
    await context.clearCookies();

    // The user follows the client's link: login page, consent page, approval.
    const state = 'browser-state-42';
    await page.goto(`${gather}/o/authorize?${formBody({ client_id: clientId, response_type: 'code', state })}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Username or e-mail').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Authorize Browser test client?' }).waitFor();
    assert.match((await page.locator('main').textContent()) ?? '', /read[\s\S]*write[\s\S]*groups/);
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    await page.getByRole('heading', { name: 'Back at the client' }).waitFor();

    const landed = new URL(page.url());
    assert.equal(landed.searchParams.get('state'), state);
    const code = landed.searchParams.get('code') ?? '';
    assert.ok(code);

    // The client exchanges the code and calls the API.
    const token = await tokenRequest(
      server.app,
      { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: callbackUrl },
      basicAuth(clientId, clientSecret),
    );
    assert.equal(token.statusCode, 200, token.body);
    const me = await fetch(`${gather}/api/v1/user`, { headers: { authorization: `Bearer ${token.json().access_token}` } });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { username: string }).username, 'amina');
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
