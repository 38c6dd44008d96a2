/**
 * `openStore`: the Store handle (src/native/store-handle.ts) with this build's journal
 * migrations. Composition roots (command `run` methods, the hub, its task worker, doctor)
 * call it once and pass the Store down.
 */
import { openNativeStore, type Store, type StoreMode } from '../native/store-handle.js';
import { JOURNAL_MIGRATIONS } from '../workflows/journal-migrations/index.js';

export type { Store, StoreMode };

/** Open the Store of `dataDir` in `mode`; nothing is opened until first use. Close it in `finally`. */
export function openStore(dataDir: string, options: { readonly mode: StoreMode }): Store {
  return openNativeStore(dataDir, { mode: options.mode, journalMigrations: JOURNAL_MIGRATIONS });
}
