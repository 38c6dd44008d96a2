/**
 * Authority schema step 008: operator approvals and landings (docs/admission.md). Owned by src/native/approvals.ts and
 * src/native/landings.ts.
 */
import type { SqliteDatabase } from '../sqlite.js';

// An approval binds the operator's decision to one exact subject — Change id and version,
// revision, review context, policy epoch, workflow profile, target, installed requirement — and
// the receipt that qualified it (the imported v2 receipt or a server-executed run's receipt).
// Approvals and landings are immutable; u64 values are 20-digit TEXT (sqlite.ts u64ToSql).
// A landing names the approval it consumed, once: the same approval never lands twice.
export function migrateApprovals(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE approvals (
      approval_id INTEGER PRIMARY KEY CHECK (approval_id >= 1),
      repository TEXT NOT NULL REFERENCES repositories(id),
      change_id TEXT NOT NULL,
      change_version TEXT NOT NULL CHECK (length(change_version) = 20),
      revision TEXT NOT NULL CHECK (length(revision) = 64),
      context_digest TEXT NOT NULL CHECK (length(context_digest) = 64),
      policy_epoch TEXT NOT NULL CHECK (length(policy_epoch) = 20),
      profile TEXT NOT NULL,
      target TEXT NOT NULL,
      requirement_digest TEXT NOT NULL CHECK (length(requirement_digest) = 64),
      receipt_kind TEXT NOT NULL CHECK (receipt_kind IN ('imported', 'server_run')),
      receipt_digest TEXT NOT NULL CHECK (length(receipt_digest) = 64),
      approved_by TEXT NOT NULL,
      approved_at_ms INTEGER NOT NULL,
      UNIQUE (repository, change_id, change_version, context_digest, profile, target, requirement_digest,
        receipt_digest)
    ) STRICT;
    CREATE INDEX approvals_by_change ON approvals (repository, change_id, change_version);

    CREATE TABLE landings (
      landing_id INTEGER PRIMARY KEY CHECK (landing_id >= 1),
      repository TEXT NOT NULL REFERENCES repositories(id),
      target TEXT NOT NULL,
      previous_revision TEXT NOT NULL CHECK (length(previous_revision) = 64),
      revision TEXT NOT NULL CHECK (length(revision) = 64),
      change_id TEXT NOT NULL,
      change_version TEXT NOT NULL CHECK (length(change_version) = 20),
      approval_id INTEGER NOT NULL UNIQUE REFERENCES approvals(approval_id),
      receipt_kind TEXT NOT NULL CHECK (receipt_kind IN ('imported', 'server_run')),
      receipt_digest TEXT NOT NULL CHECK (length(receipt_digest) = 64),
      landed_by TEXT NOT NULL,
      landed_at_ms INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX landings_by_target ON landings (repository, target, landing_id);

    CREATE TRIGGER approvals_immutable_update BEFORE UPDATE ON approvals
      BEGIN SELECT RAISE(ABORT, 'approvals are immutable'); END;
    CREATE TRIGGER approvals_immutable_delete BEFORE DELETE ON approvals
      BEGIN SELECT RAISE(ABORT, 'approvals are immutable'); END;
    CREATE TRIGGER landings_immutable_update BEFORE UPDATE ON landings
      BEGIN SELECT RAISE(ABORT, 'landings are immutable'); END;
    CREATE TRIGGER landings_immutable_delete BEFORE DELETE ON landings
      BEGIN SELECT RAISE(ABORT, 'landings are immutable'); END;
  `);
}
