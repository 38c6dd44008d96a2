/**
 * The journal's (D/skill-workflows/state.sqlite) migrations, in order. The DDL of every
 * journal table lives here, including the agent-task tables whose logic is in src/tasks/.
 */
import type { Migration } from '../../native/sqlite.js';
import { migrateRuns } from './001-runs.js';
import { migrateCommandAttempts } from './002-command-attempts.js';
import { migrateTasks } from './003-tasks.js';
import { migrateTaskRows } from './004-task-rows.js';
import { migrateAttemptRecords } from './005-attempt-records.js';
import { migrateCollectorTransfers } from './006-collector-transfers.js';
import { migrateReviewSteps } from './007-review-steps.js';

export const JOURNAL_MIGRATIONS: readonly Migration[] = [
  migrateRuns,
  migrateCommandAttempts,
  migrateTasks,
  migrateTaskRows,
  migrateAttemptRecords,
  migrateCollectorTransfers,
  migrateReviewSteps,
];
