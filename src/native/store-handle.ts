/**
 * The one Store handle of a command, the hub or a task worker (docs/architecture.md "Storage"):
 * the authority and the journal of one data directory, each opened on first use in the
 * handle's mode and closed together. A composition root opens it once (src/tasks/store.ts
 * `openStore`) and passes it down; nothing below a root opens a database of its own.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { journalPaths, openJournalDatabase, type Journal } from './journal-db.js';
import type { Migration } from './sqlite.js';
import { openAuthority, type Authority } from './store.js';

export type StoreMode = 'read' | 'write';

export interface Store {
  /**
   * Absolute data directory: for file locations only (keys, claim files, forge links); never
   * reopen the store from it.
   */
  readonly dataDir: string;
  /** 'read': the authority is opened read-only without migration, the journal never created. */
  readonly mode: StoreMode;
  /** The authority connection, opened on first use in the store's mode (STORE_NOT_INITIALIZED etc. as today). */
  authority(): Authority;
  /** The journal: opened on first use; null when absent and `create` is false; 'read' mode opens read-only. */
  journal(create?: boolean): Journal | null;
  /** As journal() but WORKFLOW_JOURNAL_NOT_INITIALIZED when absent (today's openJournal(dataDir,'read'|'write')). */
  requireJournal(): Journal;
  close(): void;
}

export interface NativeStoreOptions {
  readonly mode: StoreMode;
  /**
   * The journal's schema steps (composed by the layers that own its tables); null for a Store
   * that only reads the authority (the Stop hooks), whose journal() and requireJournal() are INTERNAL.
   */
  readonly journalMigrations: readonly Migration[] | null;
}

/**
 * A Store over `dataDir`; nothing is opened until first use. 'read' opens existing files only,
 * read-only and without migration, and never creates the journal (journal(true) is INTERNAL);
 * 'write' migrates what it opens and creates the journal only when journal(true) asks.
 * close() closes what was opened and may be called more than once.
 */
export function openNativeStore(dataDir: string, options: NativeStoreOptions): Store {
  const { mode, journalMigrations } = options;
  const absolute = resolve(dataDir);
  let authority: Authority | null = null;
  let journal: Journal | null = null;
  const openJournalIn = (journalMode: 'read' | 'write' | 'create'): Journal => {
    if (journalMigrations === null) {
      throw new AgentscmError('INTERNAL', 'this store was opened for the authority only and has no journal');
    }
    journal = openJournalDatabase(absolute, journalMode, journalMigrations);
    return journal;
  };
  return {
    dataDir: absolute,
    mode,
    authority(): Authority {
      authority ??= openAuthority(absolute, { mode });
      return authority;
    },
    journal(create = false): Journal | null {
      if (journal !== null) return journal;
      if (create && mode === 'read') {
        throw new AgentscmError('INTERNAL', 'a store opened for reading never creates the journal');
      }
      if (!create && journalMigrations !== null && !existsSync(journalPaths(absolute).db)) return null;
      return openJournalIn(create ? 'create' : mode);
    },
    requireJournal(): Journal {
      return journal ?? openJournalIn(mode);
    },
    close(): void {
      const opened = [journal, authority];
      journal = null;
      authority = null;
      for (const connection of opened) connection?.close();
    },
  };
}

/**
 * A 'read' Store of the authority only: it loads no journal schema, so a command that must start
 * fast (the Stop hooks, docs/stop-hooks.md "Performance") opens it without the layers above.
 */
export function openAuthorityReadStore(dataDir: string): Store {
  return openNativeStore(dataDir, { mode: 'read', journalMigrations: null });
}
