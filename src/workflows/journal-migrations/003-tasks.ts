/** Journal schema step 003: logical tasks, attempts, assertions and idempotency rows (agent-owned tasks). */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateTasks(_db: SqliteDatabase): void {
  // Filled in by the issue that owns these tables.
}
