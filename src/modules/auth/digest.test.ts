import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSealer } from '../../platform/secrets.ts';
import {
  DigestNonces,
  NonceCounts,
  digestLogins,
  openDigestSecrets,
  parseDigestParams,
  pruneDigestSecrets,
  refreshDigestSecrets,
  sealDigestSecrets,
  uriMatches,
} from './digest.ts';

describe('Digest header parsing', () => {
  test('quoted strings may hold commas, equals signs and escaped quotes; tokens need no quotes', () => {
    const params = parseDigestParams('username="a,b=c", realm="R \\"x\\"", qop=auth,nc=00000001 , uri="/p?q=1,2"');
    assert.deepEqual(Object.fromEntries(params ?? []), { username: 'a,b=c', realm: 'R "x"', qop: 'auth', nc: '00000001', uri: '/p?q=1,2' });
  });

  test('duplicate, unterminated and nameless parameters make the header malformed', () => {
    assert.equal(parseDigestParams('a="1", A="2"'), undefined);
    assert.equal(parseDigestParams('a="1'), undefined);
    assert.equal(parseDigestParams('="1"'), undefined);
  });

  test('the uri must be the request target, in origin or absolute form', () => {
    assert.ok(uriMatches('/formList?formID=a', '/formList?formID=a'));
    assert.ok(uriMatches('https://example.org/formList?formID=a', '/formList?formID=a'));
    assert.ok(!uriMatches('/formList', '/formList?formID=a'));
    assert.ok(!uriMatches('/other', '/formList'));
  });
});

describe('Digest nonces', () => {
  const nonces = new DigestNonces(Buffer.from('secret'), 'Gather', 300_000);

  test('fresh, then stale after the lifetime; forged or foreign nonces are invalid', () => {
    const nonce = nonces.mint(1_000_000);
    assert.equal(nonces.check(nonce, 1_000_000 + 299_000), 'fresh');
    assert.equal(nonces.check(nonce, 1_000_000 + 301_000), 'stale');
    const flip = (text: string, at: number, to: string): string => text.slice(0, at) + to + text.slice(at + 1);
    assert.equal(nonces.check(flip(nonce, 30, nonce[30] === 'A' ? 'B' : 'A'), 1_000_000), 'invalid');
    // The last character carries two spare bits: another spelling of the same bytes is refused too.
    const last = nonce.at(-1) ?? 'A';
    const sibling = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split('').find(
      (c) => c !== last && Buffer.from(flip(nonce, 42, c), 'base64url').equals(Buffer.from(nonce, 'base64url')),
    );
    assert.ok(sibling);
    assert.equal(nonces.check(flip(nonce, 42, sibling), 1_000_000), 'invalid');
    assert.equal(new DigestNonces(Buffer.from('other'), 'Gather').check(nonce, 1_000_000), 'invalid');
    assert.equal(new DigestNonces(Buffer.from('secret'), 'Other').check(nonce, 1_000_000), 'invalid');
    assert.equal(nonces.check(nonces.mint(1_000_000 + 3_600_000), 1_000_000), 'invalid', 'issued in the future');
  });

  test('each count is accepted once, out of order within the window, never below it', () => {
    const counts = new NonceCounts();
    assert.ok(counts.use('n', 5, 10_000, 0));
    assert.ok(counts.use('n', 2, 10_000, 0));
    assert.ok(!counts.use('n', 5, 10_000, 0));
    assert.ok(counts.use('n', 1000, 10_000, 0));
    assert.ok(!counts.use('n', 1000 - NonceCounts.WINDOW, 10_000, 0));
    assert.ok(counts.use('n', 1000 - NonceCounts.WINDOW + 1, 10_000, 0));
    // After the nonce expires its window is forgotten (the nonce is refused as stale anyway).
    assert.ok(counts.use('n', 5, 20_000, 10_000));
  });

  test('the window store is bounded', () => {
    const counts = new NonceCounts(3);
    for (const n of ['a', 'b', 'c', 'd']) assert.ok(counts.use(n, 1, 10_000, 0));
    assert.ok(counts.use('a', 1, 10_000, 0), 'the oldest window was dropped');
    assert.ok(!counts.use('d', 1, 10_000, 0));
  });
});

describe('stored HA1 values', () => {
  const sealer = createSealer(Buffer.from('secret'));
  const identity = { username: 'bob', email: 'Bob@Example.org' };

  test('one per spelling: username, e-mail as stored and in lower case', () => {
    assert.deepEqual(digestLogins(identity), ['bob', 'Bob@Example.org', 'bob@example.org']);
    const secrets = openDigestSecrets(sealer, sealDigestSecrets(sealer, 'Gather', identity, 'pw'));
    assert.deepEqual(Object.keys(secrets?.ha1 ?? {}), ['bob', 'Bob@Example.org', 'bob@example.org']);
    assert.equal(openDigestSecrets(createSealer(Buffer.from('other key')), sealDigestSecrets(sealer, 'Gather', identity, 'pw')), undefined);
  });

  test('refreshed when missing, for another realm or spelling, or for another password; kept otherwise', () => {
    const sealed = sealDigestSecrets(sealer, 'Gather', identity, 'pw');
    assert.equal(refreshDigestSecrets(sealer, 'Gather', { ...identity, digest_ha1_sealed: sealed }, 'pw'), undefined);
    assert.ok(refreshDigestSecrets(sealer, 'Gather', { ...identity, digest_ha1_sealed: null }, 'pw'));
    assert.ok(refreshDigestSecrets(sealer, 'Other', { ...identity, digest_ha1_sealed: sealed }, 'pw'));
    assert.ok(refreshDigestSecrets(sealer, 'Gather', { ...identity, username: 'robert', digest_ha1_sealed: sealed }, 'pw'));
    assert.ok(refreshDigestSecrets(sealer, 'Gather', { ...identity, digest_ha1_sealed: sealed }, 'new pw'));
  });

  test('a rename without the password keeps only the spellings still current', () => {
    const sealed = sealDigestSecrets(sealer, 'Gather', identity, 'pw');
    const pruned = pruneDigestSecrets(sealer, sealed, { username: 'robert', email: 'Bob@Example.org' });
    assert.deepEqual(Object.keys(openDigestSecrets(sealer, pruned)?.ha1 ?? {}), ['Bob@Example.org', 'bob@example.org']);
    assert.equal(pruneDigestSecrets(sealer, sealed, { username: 'robert', email: 'r@example.org' }), null);
  });
});
