/**
 * The journal's schema steps come from two layers (docs/architecture.md "Storage"): each version
 * is defined by exactly one of them, and the versions run 1..n without a gap.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import type { Migration } from '../../src/native/sqlite.js';
import { TASK_JOURNAL_STEPS } from '../../src/tasks/journal-migrations/index.js';
import { composeJournalMigrations, JOURNAL_MIGRATIONS } from '../../src/tasks/store.js';
import { WORKFLOW_JOURNAL_STEPS } from '../../src/workflows/journal-migrations/index.js';

const step: Migration = () => undefined;

test('every journal version is defined by exactly one layer, with no gap', () => {
  const versions = [...WORKFLOW_JOURNAL_STEPS.keys(), ...TASK_JOURNAL_STEPS.keys()].sort((a, b) => a - b);
  assert.deepEqual(
    versions,
    versions.map((_, index) => index + 1),
  );
  assert.equal(JOURNAL_MIGRATIONS.length, versions.length);
  for (const [version, migration] of [...WORKFLOW_JOURNAL_STEPS, ...TASK_JOURNAL_STEPS]) {
    assert.equal(JOURNAL_MIGRATIONS[version - 1], migration, `step ${version} is applied at its version`);
  }
});

test('composing refuses a version defined twice or missing', () => {
  assert.throws(() => composeJournalMigrations([new Map([[1, step]]), new Map([[1, step]])]), {
    code: 'INTERNAL',
    message: /step 1 is defined twice/,
  });
  assert.throws(() => composeJournalMigrations([new Map([[1, step]]), new Map([[3, step]])]), {
    code: 'INTERNAL',
    message: /step 2 is missing/,
  });
  assert.deepEqual(composeJournalMigrations([new Map([[2, step]]), new Map([[1, step]])]), [step, step]);
});
