/**
 * Authority schema step 004: executor keys, enrollment epochs, revocations (agent-owned tasks). Owned by
 * src/native/executor-registry.ts.
 */
import type { SqliteDatabase } from '../sqlite.js';

// Enrollment epochs and revocations are immutable facts: triggers refuse UPDATE and DELETE, so
// re-enrollment can only add a newer epoch and a revocation can never be undone. u64 epochs are
// 20-digit TEXT (sqlite.ts u64ToSql); `seq` is store-local creation order, never an identity.
export function migrateExecutorRegistry(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE executor_registrations (
      registration_id TEXT PRIMARY KEY,
      repository TEXT NOT NULL REFERENCES repositories(id),
      profile TEXT NOT NULL,
      step TEXT NOT NULL,
      executor_id TEXT NOT NULL,
      registration_epoch TEXT NOT NULL CHECK (length(registration_epoch) = 20),
      public_key TEXT NOT NULL CHECK (length(public_key) = 64),
      verification_key_id TEXT NOT NULL CHECK (length(verification_key_id) = 64),
      seq INTEGER NOT NULL UNIQUE,
      UNIQUE (repository, profile, step, executor_id, registration_epoch)
    ) STRICT;

    CREATE TABLE executor_revocations (
      registration_id TEXT PRIMARY KEY REFERENCES executor_registrations(registration_id),
      reason TEXT,
      seq INTEGER NOT NULL UNIQUE
    ) STRICT;

    CREATE TRIGGER executor_registrations_immutable_update BEFORE UPDATE ON executor_registrations
      BEGIN SELECT RAISE(ABORT, 'executor registrations are immutable'); END;
    CREATE TRIGGER executor_registrations_immutable_delete BEFORE DELETE ON executor_registrations
      BEGIN SELECT RAISE(ABORT, 'executor registrations are immutable'); END;
    CREATE TRIGGER executor_revocations_immutable_update BEFORE UPDATE ON executor_revocations
      BEGIN SELECT RAISE(ABORT, 'executor revocations are immutable'); END;
    CREATE TRIGGER executor_revocations_immutable_delete BEFORE DELETE ON executor_revocations
      BEGIN SELECT RAISE(ABORT, 'executor revocations are immutable'); END;
  `);
}
