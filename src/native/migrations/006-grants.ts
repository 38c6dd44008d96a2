/**
 * Authority schema step 006: grants and the SHA-256 of every token they ever had (docs/wire.md "Authority identity and
 * grants"). Owned by src/native/grants.ts.
 */
import type { SqliteDatabase } from '../sqlite.js';

// A grant's identity (id, repository, actor, scope) never changes; rotation raises its u64
// generation (20-digit TEXT, sqlite.ts u64ToSql) and points it at a new token hash; revocation
// is final. `grant_tokens` keeps the hash of every generation, immutable, so that a rotated
// token is told apart from an unknown one. No token is stored, only its SHA-256.
export function migrateGrants(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE grants (
      grant_id TEXT PRIMARY KEY,
      repository TEXT NOT NULL REFERENCES repositories(id),
      owner_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      scope TEXT NOT NULL CHECK (scope IN ('agent', 'reader')),
      generation TEXT NOT NULL CHECK (length(generation) = 20),
      token_sha256 TEXT NOT NULL UNIQUE CHECK (length(token_sha256) = 64),
      revoked INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
      created_at_ms INTEGER NOT NULL,
      changed_at_ms INTEGER NOT NULL,
      seq INTEGER NOT NULL UNIQUE
    ) STRICT;

    CREATE TABLE grant_tokens (
      token_sha256 TEXT PRIMARY KEY CHECK (length(token_sha256) = 64),
      grant_id TEXT NOT NULL REFERENCES grants(grant_id),
      generation TEXT NOT NULL CHECK (length(generation) = 20),
      UNIQUE (grant_id, generation)
    ) STRICT, WITHOUT ROWID;

    CREATE TRIGGER grants_identity_immutable BEFORE UPDATE ON grants
      WHEN NEW.grant_id IS NOT OLD.grant_id OR NEW.repository IS NOT OLD.repository OR NEW.owner_id IS NOT OLD.owner_id
        OR NEW.agent_id IS NOT OLD.agent_id OR NEW.scope IS NOT OLD.scope OR NEW.seq IS NOT OLD.seq OR
        NEW.created_at_ms IS NOT OLD.created_at_ms
      BEGIN SELECT RAISE(ABORT, 'a grant keeps its identity'); END;
    CREATE TRIGGER grants_revocation_final BEFORE UPDATE ON grants WHEN OLD.revoked = 1
      BEGIN SELECT RAISE(ABORT, 'a revoked grant never changes'); END;
    CREATE TRIGGER grants_generation_rises BEFORE UPDATE ON grants WHEN NEW.generation < OLD.generation
      BEGIN SELECT RAISE(ABORT, 'a grant generation never decreases'); END;
    CREATE TRIGGER grants_no_delete BEFORE DELETE ON grants
      BEGIN SELECT RAISE(ABORT, 'grants are never deleted; revoke them'); END;
    CREATE TRIGGER grant_tokens_immutable_update BEFORE UPDATE ON grant_tokens
      BEGIN SELECT RAISE(ABORT, 'grant token hashes are immutable'); END;
    CREATE TRIGGER grant_tokens_immutable_delete BEFORE DELETE ON grant_tokens
      BEGIN SELECT RAISE(ABORT, 'grant token hashes are immutable'); END;
  `);
}
