// The files of one upload request (an XLSForm publish, a media file) together hold at most
// UPLOAD_LIMIT: ten parts of the limit each would make one request hold ten times the memory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { HOUSEHOLD_CSV } from '../fixtures/submissions.ts';

const LIMIT = 64 * 1024;
let server: TestServer;
let bob: TestUser;

before(async () => {
  server = await startTestServer({ UPLOAD_LIMIT: String(LIMIT) });
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

const filler = (name: string, size: number) => ({ name, fileName: `${name}.bin`, content: Buffer.alloc(size, 0x61) });

test('files that together pass UPLOAD_LIMIT are refused with 413, each within it', async () => {
  const body = multipart({}, [filler('extra1', LIMIT - 100), filler('extra2', LIMIT - 100), { name: 'xls_file', fileName: 'household.csv', content: HOUSEHOLD_CSV }]);
  // An account of its own, whose form list is empty whatever the other tests publish.
  const ann = await createUser(server.app, 'ann');
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...ann.auth, ...body.headers } });
  assert.equal(res.statusCode, 413, res.body);
  assert.match(res.json().detail, /larger than 65536 bytes/);
  const forms = await server.app.inject({ method: 'GET', url: '/api/v1/forms', headers: ann.auth });
  assert.deepEqual(forms.json(), [], 'nothing published');
});

test('one file over UPLOAD_LIMIT is refused with 413 naming it; a form within it publishes', async () => {
  const big = multipart({}, [{ name: 'xls_file', fileName: 'big.csv', content: Buffer.alloc(LIMIT + 1, 0x61) }]);
  const refused = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: big.payload, headers: { ...bob.auth, ...big.headers } });
  assert.equal(refused.statusCode, 413, refused.body);
  assert.match(refused.json().detail, /big\.csv/);
  const body = multipart({}, [{ name: 'xls_file', fileName: 'household.csv', content: HOUSEHOLD_CSV }]);
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
});
