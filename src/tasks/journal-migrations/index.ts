/**
 * The tasks layer's journal (D/skill-workflows/state.sqlite) schema steps, keyed by their
 * version: agent tasks, their attempts, assertions and requests, and the collector transfers
 * that finish them. The workflow tables are defined by src/workflows/journal-migrations/;
 * src/tasks/store.ts composes both into the journal's one ordered list (docs/architecture.md
 * "Storage").
 */
import type { Migration } from '../../native/sqlite.js';
import { migrateTasks } from './003-tasks.js';
import { migrateTaskRows } from './004-task-rows.js';
import { migrateCollectorTransfers } from './006-collector-transfers.js';
import { migrateUnresolvedScopes } from './009-unresolved-scopes.js';

export const TASK_JOURNAL_STEPS: ReadonlyMap<number, Migration> = new Map([
  [3, migrateTasks],
  [4, migrateTaskRows],
  [6, migrateCollectorTransfers],
  [9, migrateUnresolvedScopes],
]);
