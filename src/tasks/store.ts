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

/** Run `fn` with the Store of `dataDir` opened in `mode`, closing it afterwards (a command's one store). */
export function withStore<T>(dataDir: string, mode: StoreMode, fn: (store: Store) => T): T {
  const store = openStore(dataDir, { mode });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}
