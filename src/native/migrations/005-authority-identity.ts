/**
 * Authority schema step 005: the store's authority_id (docs/wire.md "Authority identity and grants"). Owned by
 * src/native/authority-identity.ts.
 */
import { randomBytes } from 'node:crypto';

import type { SqliteDatabase } from '../sqlite.js';

// One row, written once: a store created by this build gets its identity at creation, an older
// store at the first writing command that migrates it. Triggers refuse UPDATE and DELETE, so the
// identity that collector transfers name as their audience never changes.
export function migrateAuthorityIdentity(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE authority_identity (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      authority_id TEXT NOT NULL CHECK (length(authority_id) = 32 AND authority_id NOT GLOB '*[^0-9a-f]*')
    ) STRICT;

    CREATE TRIGGER authority_identity_immutable_update BEFORE UPDATE ON authority_identity
      BEGIN SELECT RAISE(ABORT, 'the authority identity is immutable'); END;
    CREATE TRIGGER authority_identity_immutable_delete BEFORE DELETE ON authority_identity
      BEGIN SELECT RAISE(ABORT, 'the authority identity is immutable'); END;
  `);
  db.prepare('INSERT INTO authority_identity (singleton, authority_id) VALUES (1, ?)').run(
    randomBytes(16).toString('hex'),
  );
}
