/**
 * Authority schema step 002: installed target workflow requirements (skill workflows). Owned by the module that reads
 * and writes these tables.
 */
import type { SqliteDatabase } from '../sqlite.js';

// `requirements` holds every installed definition once, immutable and keyed by its
// requirement digest (the plan digest of the definition as compiled at installation);
// `target_requirements` points each protected target at its current one. u64 columns are
// 20-digit text (sqlite.ts u64ToSql).
export function migrateRequirements(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE requirements (
      repository TEXT NOT NULL REFERENCES repositories(id),
      requirement_digest TEXT NOT NULL CHECK (length(requirement_digest) = 64),
      name TEXT NOT NULL,
      definition BLOB NOT NULL,
      definition_sha256 TEXT NOT NULL CHECK (length(definition_sha256) = 64),
      skill_digest TEXT NOT NULL CHECK (length(skill_digest) = 64),
      revision TEXT NOT NULL CHECK (length(revision) = 64),
      policy_epoch TEXT NOT NULL CHECK (length(policy_epoch) = 20),
      created_at_ms INTEGER NOT NULL,
      PRIMARY KEY (repository, requirement_digest)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE target_requirements (
      repository TEXT NOT NULL,
      target TEXT NOT NULL,
      requirement_digest TEXT NOT NULL,
      installed_at_ms INTEGER NOT NULL,
      PRIMARY KEY (repository, target),
      FOREIGN KEY (repository, target) REFERENCES targets(repository, name),
      FOREIGN KEY (repository, requirement_digest) REFERENCES requirements(repository, requirement_digest)
    ) STRICT, WITHOUT ROWID;
  `);
}
