/** Journal schema step 002: durable command attempts and execution records (command collector). */
import type { SqliteDatabase } from '../../native/sqlite.js';

export function migrateCommandAttempts(_db: SqliteDatabase): void {
  // Filled in by the issue that owns these tables.
}
