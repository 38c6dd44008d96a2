/** Authority schema step 001: repositories, blobs, revisions and entries, Changes and versions, policy epochs, targets (foundation). Owned by the module that reads and writes these tables. */
import type { SqliteDatabase } from '../sqlite.js';

export function migrateStore(_db: SqliteDatabase): void {
  // Filled in by the issue that owns these tables.
}
