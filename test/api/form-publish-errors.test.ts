// A refused XLSForm: onadata's alert body, plus each converter error's sheet, row and column.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

function send(method: 'POST' | 'PATCH', url: string, csv: string) {
  const body = multipart({}, [formFile(csv)]);
  return server.app.inject({ method, url, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
}

const DUPLICATE_NAME = csvForm({ extra: ',text,name,Your name again' });

test('publishing a broken XLSForm: 400 alert-error with the error located by sheet, row and column', async () => {
  const res = await send('POST', '/api/v1/forms', DUPLICATE_NAME);
  assert.equal(res.statusCode, 400);
  const body = res.json();
  assert.equal(body.type, 'alert-error');
  assert.match(body.text, /\[row : 4\] On the 'survey' sheet, the 'name' value 'name' is invalid/);
  assert.deepEqual(body.errors, [{ message: body.text, sheet: 'survey', row: 4, column: 'name' }]);
});

test('an error the converter cannot place has only its message; other refusals keep onadata’s two keys', async () => {
  const unknown = await send('POST', '/api/v1/forms', csvForm({ extra: ',bogus_type,thing,Thing' }));
  assert.equal(unknown.statusCode, 400);
  assert.deepEqual(unknown.json().errors, [{ message: "Unknown question type 'bogus_type'.", sheet: 'survey', column: 'type' }]);

  const garbage = multipart({}, [{ name: 'xls_file', fileName: 'broken.xlsx', content: 'this is not a spreadsheet' }]);
  const broken = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: garbage.payload, headers: { ...bob.auth, ...garbage.headers } });
  assert.equal(broken.statusCode, 400);
  assert.ok(Array.isArray(broken.json().errors));
  assert.equal(broken.json().errors[0].row, undefined);

  const empty = multipart({});
  const none = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: empty.payload, headers: { ...bob.auth, ...empty.headers } });
  assert.deepEqual(Object.keys(none.json()).sort(), ['text', 'type']);
});

test('replacing a form with a broken XLSForm answers the same located errors', async () => {
  const published = await send('POST', '/api/v1/forms', csvForm());
  assert.equal(published.statusCode, 201, published.body);
  const res = await send('PATCH', `/api/v1/forms/${published.json().formid}`, DUPLICATE_NAME);
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().type, 'alert-error');
  assert.deepEqual(res.json().errors, [{ message: res.json().text, sheet: 'survey', row: 4, column: 'name' }]);
});
