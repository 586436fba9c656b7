import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSubmissionKey } from './submission-key.ts';

describe('downloadSubmission formId', () => {
  test('reads the id_string and the uuid of the key Briefcase builds', () => {
    assert.deepEqual(parseSubmissionKey('household[@version=2026010101 and @uiVersion=null]/household[@key=uuid:5b2c-41]'), {
      ok: true,
      key: { idString: 'household', uuid: '5b2c-41' },
    });
    // Briefcase formats an absent version as Optional.empty; a version may hold a slash.
    assert.deepEqual(parseSubmissionKey('f[@version=Optional.empty and @uiVersion=null]/data[@key=uuid:a]'), { ok: true, key: { idString: 'f', uuid: 'a' } });
    assert.deepEqual(parseSubmissionKey('f[@version=2020/01 and @uiVersion=null]/data[@key=uuid:a]'), { ok: true, key: { idString: 'f', uuid: 'a' } });
  });

  test('takes a formId without the version bracket, and a key without uuid:', () => {
    assert.deepEqual(parseSubmissionKey('f/data[@key=uuid:abc]'), { ok: true, key: { idString: 'f', uuid: 'abc' } });
    assert.deepEqual(parseSubmissionKey('f/data[@key=abc]'), { ok: true, key: { idString: 'f', uuid: 'abc' } });
  });

  test('refuses what names no record, with a message', () => {
    for (const bad of [undefined, '', 'household', 'household[@version=1]', '/data[@key=uuid:a]', 'f/data', 'f/data[@key=]', 'f/data[@key=uuid:]']) {
      const parsed = parseSubmissionKey(bad);
      assert.equal(parsed.ok, false, String(bad));
      if (!parsed.ok) assert.match(parsed.message, /formId/);
    }
  });
});
