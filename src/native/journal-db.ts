/**
 * The workflow journal database D/skill-workflows/state.sqlite (docs/architecture.md "Storage"):
 * where it lives and how it is opened. Writers migrate and may create it; readers open an
 * existing file only, read-only, without migration, and never create it. Its tables and
 * migrations belong to the layers above (src/workflows/journal.ts, src/tasks/), which pass the
 * migrations in; this module only opens the file.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { openReadOnly, openWritable, type Migration, type SqliteDatabase } from './sqlite.js';

export const JOURNAL_WHAT = 'the workflow journal';

export interface JournalPaths {
  /** D/skill-workflows */
  readonly dir: string;
  /** D/skill-workflows/state.sqlite */
  readonly db: string;
}

export type JournalMode = 'read' | 'write';

export interface Journal {
  readonly db: SqliteDatabase;
  readonly mode: JournalMode;
  readonly paths: JournalPaths;
  close(): void;
}

/** Paths of the journal under a data directory. */
export function journalPaths(dataDir: string): JournalPaths {
  const dir = join(resolve(dataDir), 'skill-workflows');
  return { dir, db: join(dir, 'state.sqlite') };
}

/**
 * Open the journal with its schema `migrations`. 'read': existing file only, read-only, no
 * migration (WORKFLOW_JOURNAL_NOT_INITIALIZED when absent). 'write': existing file, migrated.
 * 'create': as 'write', creating D/skill-workflows (0700) and the file when absent.
 */
export function openJournalDatabase(
  dataDir: string,
  mode: JournalMode | 'create',
  migrations: readonly Migration[],
): Journal {
  const paths = journalPaths(dataDir);
  if (mode === 'read') {
    if (!existsSync(paths.db)) throw journalMissing(dataDir);
    const db = openReadOnly(paths.db, migrations.length, JOURNAL_WHAT, 'WORKFLOW_JOURNAL_NOT_INITIALIZED');
    return wrap(db, 'read', paths);
  }
  if (!existsSync(paths.db)) {
    if (mode === 'write') throw journalMissing(dataDir);
    try {
      mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new AgentscmError('IO_ERROR', `cannot create ${paths.dir}: ${(error as Error).message}`, { cause: error });
    }
  }
  return wrap(openWritable(paths.db, migrations, JOURNAL_WHAT), 'write', paths);
}

function journalMissing(dataDir: string): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_JOURNAL_NOT_INITIALIZED',
    `${JOURNAL_WHAT} does not exist in ${resolve(dataDir)}; nothing was created`,
    {
      hint: 'start a run first with `agentscm skill-workflow run RUN_ID FILE`, or pass the right --data-dir',
    },
  );
}

function wrap(db: SqliteDatabase, mode: JournalMode, paths: JournalPaths): Journal {
  let open = true;
  return {
    db,
    mode,
    paths,
    close() {
      if (!open) return;
      open = false;
      db.close();
    },
  };
}
