/** Authority schema step 003: command/v1 review contexts (command collector). Owned by the module that reads and writes these tables. */
import type { SqliteDatabase } from '../sqlite.js';

export function migrateReviewContexts(_db: SqliteDatabase): void {
  // Filled in by the issue that owns these tables.
}
