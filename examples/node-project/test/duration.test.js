import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dequal } from 'dequal';

import {
  compareDurations,
  DurationError,
  formatDuration,
  MAX_INPUT_LENGTH,
  parseDuration,
  sumDurations,
} from '../src/duration.js';

describe('parseDuration', () => {
  test('reads a single unit', () => {
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('2d'), 172_800_000);
  });

  test('reads several units, largest first, with or without spaces', () => {
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('2d 4h'), 187_200_000);
    assert.equal(parseDuration('  1m 5s 10ms '), 65_010);
  });

  test('reads fractions that come out whole', () => {
    assert.equal(parseDuration('1.5h'), 5_400_000);
    assert.equal(parseDuration('0.25s'), 250);
  });

  test('refuses a bare number, an unknown unit and trailing text', () => {
    assert.throws(() => parseDuration('90'), DurationError);
    assert.throws(() => parseDuration('3w'), /unexpected text at position 0/);
    assert.throws(() => parseDuration('1h later'), /unexpected text at position 3/);
  });

  test('refuses repeated or out-of-order units', () => {
    assert.throws(() => parseDuration('1m1m'), /repeated or out of order/);
    assert.throws(() => parseDuration('5s1h'), /repeated or out of order/);
  });

  test('refuses a fraction of a millisecond', () => {
    assert.throws(() => parseDuration('0.5ms'), /whole number of ms/);
  });

  test('refuses empty and non-string input', () => {
    assert.throws(() => parseDuration('   '), /must not be empty/);
    assert.throws(() => parseDuration(42), /must be a string/);
  });

  test(`reads ${MAX_INPUT_LENGTH} characters and refuses one more`, () => {
    const atBound = `${'0'.repeat(MAX_INPUT_LENGTH - 2)}1s`;
    assert.equal(atBound.length, MAX_INPUT_LENGTH);
    assert.equal(parseDuration(atBound), 1_000);
    assert.throws(() => parseDuration(`0${atBound}`), /at most 64 characters/);
  });
});

describe('formatDuration', () => {
  test('prints the largest units first and skips zero parts', () => {
    assert.equal(formatDuration(5_400_000), '1h30m');
    assert.equal(formatDuration(86_400_001), '1d1ms');
  });

  test('prints zero as 0s', () => {
    assert.equal(formatDuration(0), '0s');
  });

  test('refuses negative and fractional values', () => {
    assert.throws(() => formatDuration(-1), RangeError);
    assert.throws(() => formatDuration(1.5), RangeError);
  });

  test('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 1_000, 61_001, 3_600_000, 90_061_001]) {
      assert.equal(parseDuration(formatDuration(ms)), ms);
    }
  });
});

describe('compareDurations and sumDurations', () => {
  test('compare mixes strings and numbers', () => {
    assert.equal(compareDurations('1h', '59m'), 1);
    assert.equal(compareDurations('60m', 3_600_000), 0);
    assert.equal(compareDurations(1, '1s'), -1);
  });

  test('sort a list of durations', () => {
    const sorted = ['1h', '90s', '2m', '500ms'].sort(compareDurations);
    assert.ok(dequal(sorted, ['500ms', '90s', '2m', '1h']), `sorted as ${sorted.join(', ')}`);
  });

  test('sum adds strings and numbers', () => {
    assert.equal(sumDurations(['1h', '30m', 250]), 5_400_250);
    assert.equal(sumDurations([]), 0);
  });
});
