/**
 * Authority schema step 007: installed collector profiles (docs/wire.md "CollectorProfile v1"). Owned by
 * src/native/collector-profiles.ts.
 */
import type { SqliteDatabase } from '../sqlite.js';

// A profile is immutable and keyed by its collector_profile_id; `canonical` holds the exact bytes
// the id digests, the other columns are indexed copies of its bindings. Triggers refuse UPDATE
// and DELETE: a changed profile is another profile with another id.
export function migrateCollectorProfiles(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE collector_profiles (
      collector_profile_id TEXT PRIMARY KEY CHECK (length(collector_profile_id) = 64),
      repository TEXT NOT NULL REFERENCES repositories(id),
      workflow_profile TEXT NOT NULL,
      step TEXT NOT NULL,
      registration_id TEXT NOT NULL REFERENCES executor_registrations(registration_id),
      canonical BLOB NOT NULL,
      installed_at_ms INTEGER NOT NULL,
      seq INTEGER NOT NULL UNIQUE
    ) STRICT;
    CREATE INDEX collector_profiles_by_registration ON collector_profiles (registration_id);

    CREATE TRIGGER collector_profiles_immutable_update BEFORE UPDATE ON collector_profiles
      BEGIN SELECT RAISE(ABORT, 'collector profiles are immutable'); END;
    CREATE TRIGGER collector_profiles_immutable_delete BEFORE DELETE ON collector_profiles
      BEGIN SELECT RAISE(ABORT, 'collector profiles are immutable'); END;
  `);
}
