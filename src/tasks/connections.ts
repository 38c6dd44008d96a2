/**
 * Connections an in-process adapter keeps open across task calls (the hub, the benchmark).
 * Without a session every call opens and closes its own connections (the CLI). A session opens
 * the authority for writing (transitions take its writer reservation; reads run in read
 * snapshots of the same connection) and the journal only once it exists or a transition
 * creates it — a read never creates the journal.
 */
import { existsSync } from 'node:fs';

import { openAuthority, type Authority } from '../native/store.js';
import { journalPaths, openJournal, type Journal } from '../workflows/journal.js';

export interface TaskConnections {
  readonly dataDir: string;
  /** The authority, opened for writing on first use. */
  authority(): Authority;
  /** The journal; null when it does not exist and `create` is false. */
  journal(create: boolean): Journal | null;
  close(): void;
}

/** Open a session over `dataDir` (nothing is opened until first use). */
export function openTaskConnections(dataDir: string): TaskConnections {
  let auth: Authority | null = null;
  let journal: Journal | null = null;
  return {
    dataDir,
    authority(): Authority {
      auth ??= openAuthority(dataDir, { mode: 'write' });
      return auth;
    },
    journal(create: boolean): Journal | null {
      if (journal !== null) return journal;
      if (!create && !existsSync(journalPaths(dataDir).db)) return null;
      journal = openJournal(dataDir, create ? 'create' : 'write');
      return journal;
    },
    close(): void {
      journal?.close();
      auth?.close();
      journal = null;
      auth = null;
    },
  };
}
