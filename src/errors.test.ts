import { test } from 'node:test';
import assert from 'node:assert/strict';
import { duplicateEntryNames, errors } from './errors.ts';

test('each entry of the catalogue has one name across its areas', () => {
  assert.deepEqual(duplicateEntryNames(), []);
});

test('entries carry their status, onadata body and headers', () => {
  const tooLarge = errors.bodyTooLarge();
  assert.equal(tooLarge.status, 413);
  assert.deepEqual(tooLarge.body, { detail: 'Request body is too large.' });
  assert.deepEqual(errors.duplicateSubmission().body, ['Duplicate submission']);
  const odata = errors.odataNotAuthenticated();
  assert.equal(odata.status, 401);
  assert.deepEqual(odata.body, { error: { code: '401', message: 'Authentication credentials were not provided.' } });
  assert.equal(odata.headers['www-authenticate'], 'Basic realm="Gather", charset="UTF-8"');
  assert.deepEqual(errors.odataRefusal(errors.noMatch('XForm')).body, { error: { code: '404', message: 'No XForm matches the given query.' } });
});
