/**
 * Authority schema step 012: where the operator set up the collector of each installed command
 * profile (docs/agent-tasks.md "One path for the agent"). Owned by src/native/collector-setups.ts.
 *
 * `collector add` records, per collector_profile_id, the absolute state directory, the key file
 * inside it and the runtime flags it observed, so that `next`, `qualification` and the Stop
 * feedback can print the exact `agent-task claim` and `agent-task collect` lines the agent runs.
 * A rerun of `collector add` for the same profile replaces the row (the newest setup wins).
 */
import type { SqliteDatabase } from '../sqlite.js';

export function migrateCollectorSetups(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE collector_setups (
      collector_profile_id TEXT PRIMARY KEY REFERENCES collector_profiles(collector_profile_id),
      state_dir TEXT NOT NULL,
      key_file TEXT NOT NULL,
      docker TEXT NOT NULL,
      docker_socket TEXT NOT NULL,
      recorded_at_ms INTEGER NOT NULL
    ) STRICT;
  `);
}
