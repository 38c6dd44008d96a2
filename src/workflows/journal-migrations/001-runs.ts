/** Journal schema step 001: runs, steps, observations and the journal lease (skill workflows). */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateRuns(_db: SqliteDatabase): void {
  // Filled in by the issue that owns these tables.
}
