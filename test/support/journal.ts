/**
 * The journal of a test's data directory opened directly, outside any Store: for tests that seed
 * or inspect journal rows. Code under test takes a Store (src/tasks/store.ts) instead.
 */
import { openJournalDatabase, type Journal, type JournalMode } from '../../src/native/journal-db.js';
import { JOURNAL_MIGRATIONS } from '../../src/tasks/store.js';

/** 'read': existing file, read-only; 'write': existing file, migrated; 'create': as 'write', created when absent. */
export function openJournal(dataDir: string, mode: JournalMode | 'create'): Journal {
  return openJournalDatabase(dataDir, mode, JOURNAL_MIGRATIONS);
}
