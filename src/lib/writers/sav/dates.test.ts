import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spssDateFromIso, spssDateTimeFromDate, spssDateTimeFromIso, spssTimeFromIso } from './dates.ts';

const DAY = 86_400;

test('the SPSS epoch 1582-10-14 is 0 and 1970-01-01 is 141428 days later', () => {
  assert.equal(spssDateFromIso('1582-10-14'), 0);
  assert.equal(spssDateFromIso('1970-01-01'), 141_428 * DAY);
  assert.equal(spssDateTimeFromDate(new Date(0)), 141_428 * DAY);
});

test('dates keep the calendar day, leap days included', () => {
  assert.equal(spssDateFromIso('2024-02-29'), (141_428 + 19_782) * DAY);
  assert.equal(spssDateFromIso('2024-02-29T23:59:59+03:00'), (141_428 + 19_782) * DAY);
  assert.equal(spssDateFromIso('0099-01-01'), spssDateTimeFromDate(new Date('0099-01-01T00:00:00Z')));
});

test('impossible or malformed dates are null', () => {
  for (const text of ['2023-02-29', '2024-13-01', '2024-1-01', 'yesterday', '', '2024-01-01T25:00']) {
    assert.equal(spssDateTimeFromIso(text), null, text);
  }
});

test('date-times keep the wall clock by default and can convert to UTC', () => {
  const midnight = spssDateFromIso('2024-03-05') ?? Number.NaN;
  assert.equal(spssDateTimeFromIso('2024-03-05T13:14:15.250+03:00'), midnight + 13 * 3600 + 14 * 60 + 15.25);
  assert.equal(spssDateTimeFromIso('2024-03-05T13:14:15.250+03:00', 'utc'), midnight + 10 * 3600 + 14 * 60 + 15.25);
  assert.equal(spssDateTimeFromIso('2024-03-05 01:00:00-0230', 'utc'), midnight + 3.5 * 3600);
  assert.equal(spssDateTimeFromIso('2024-03-05T10:20Z'), midnight + 10 * 3600 + 20 * 60);
});

test('times are seconds since midnight', () => {
  assert.equal(spssTimeFromIso('13:14:15'), 13 * 3600 + 14 * 60 + 15);
  assert.equal(spssTimeFromIso('13:14:15.500+03:00'), 13 * 3600 + 14 * 60 + 15.5);
  assert.equal(spssTimeFromIso('01:00:00.000+03:00', 'utc'), 22 * 3600);
  assert.equal(spssTimeFromIso('07:30'), 7.5 * 3600);
  assert.equal(spssTimeFromIso('7:30'), null);
});

test('trailing garbage, missing digits and bad offsets are refused', () => {
  for (const text of ['2024-03-05T', '2024-03-05T10', '2024-03-05T10:2', '2024-03-05T10:20:30.', '2024-03-05T10:20+3', '2024-03-05x', '24-03-05', '2024-03-05T10:20:30+03:00junk']) {
    assert.equal(spssDateTimeFromIso(text), null, text);
  }
  assert.equal(spssTimeFromIso('10:20:30Z junk'), null);
});

test('years before 1582 and far ahead still count days correctly', () => {
  assert.equal(spssDateFromIso('1582-10-13'), -DAY);
  assert.equal(spssDateFromIso('1600-03-01'), spssDateTimeFromDate(new Date('1600-03-01T00:00:00Z')));
  assert.equal(spssDateFromIso('9999-12-31'), spssDateTimeFromDate(new Date('9999-12-31T00:00:00Z')));
  assert.equal(spssDateFromIso('1900-02-29'), null);
  assert.equal(spssDateFromIso('2000-02-29'), spssDateTimeFromDate(new Date('2000-02-29T00:00:00Z')));
});

test('fractions of seconds are exact to the digit given', () => {
  const midnight = spssDateFromIso('2024-03-05') ?? Number.NaN;
  assert.equal(spssDateTimeFromIso('2024-03-05T00:00:00.1'), midnight + 0.1);
  assert.equal(spssTimeFromIso('00:00:00.123'), 0.123);
  assert.equal(spssTimeFromIso('00:00:00.1234567890123456789'), 0.123456789012345);
});
