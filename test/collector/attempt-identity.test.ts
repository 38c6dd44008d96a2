import assert from 'node:assert/strict';
import test from 'node:test';

import { commandAttemptId, commandContainerName } from '../../src/workflows/command-attempts.js';

const REPO_A = '0123456789abcdef0123456789abcdef';
const REPO_B = 'fedcba9876543210fedcba9876543210';

test('the attempt ID is deterministic for one (repository, run, step, generation)', () => {
  assert.equal(commandAttemptId(REPO_A, 'r1', 'check', 1n), commandAttemptId(REPO_A, 'r1', 'check', 1n));
  assert.match(commandAttemptId(REPO_A, 'r1', 'check', 1n), /^cmd-[0-9a-f]{64}$/);
});

test('two stores reusing a run ID never share an attempt ID, container name or custody label', () => {
  const a = commandAttemptId(REPO_A, 'r1', 'check', 1n);
  const b = commandAttemptId(REPO_B, 'r1', 'check', 1n);
  assert.notEqual(a, b);
  assert.notEqual(commandContainerName(a), commandContainerName(b));
});

test('every bound input changes the attempt ID', () => {
  const base = commandAttemptId(REPO_A, 'r1', 'check', 1n);
  assert.notEqual(commandAttemptId(REPO_A, 'r2', 'check', 1n), base);
  assert.notEqual(commandAttemptId(REPO_A, 'r1', 'other', 1n), base);
  assert.notEqual(commandAttemptId(REPO_A, 'r1', 'check', 2n), base);
});
