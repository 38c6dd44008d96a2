/** Authority schema step 002: installed target workflow requirements (skill workflows). Owned by the module that reads and writes these tables. */
import type { SqliteDatabase } from '../sqlite.js';

export function migrateRequirements(_db: SqliteDatabase): void {
  // Filled in by the issue that owns these tables.
}
