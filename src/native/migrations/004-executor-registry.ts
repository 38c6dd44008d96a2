/** Authority schema step 004: executor keys, enrollment epochs, revocations (agent-owned tasks). Owned by the module that reads and writes these tables. */
import type { SqliteDatabase } from '../sqlite.js';

export function migrateExecutorRegistry(_db: SqliteDatabase): void {
  // Filled in by the issue that owns these tables.
}
