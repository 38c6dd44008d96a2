/**
 * The workflows layer's journal (D/skill-workflows/state.sqlite) schema steps, keyed by their
 * version: runs, steps, leases, command attempts and their records. The agent-task tables are
 * defined by src/tasks/journal-migrations/; src/tasks/store.ts composes both into the journal's
 * one ordered list (docs/architecture.md "Storage").
 */
import type { Migration } from '../../native/sqlite.js';
import { migrateRuns } from './001-runs.js';
import { migrateCommandAttempts } from './002-command-attempts.js';
import { migrateAttemptRecords } from './005-attempt-records.js';
import { migrateReviewSteps } from './007-review-steps.js';
import { migrateOutputTails } from './008-output-tails.js';

export const WORKFLOW_JOURNAL_STEPS: ReadonlyMap<number, Migration> = new Map([
  [1, migrateRuns],
  [2, migrateCommandAttempts],
  [5, migrateAttemptRecords],
  [7, migrateReviewSteps],
  [8, migrateOutputTails],
]);
