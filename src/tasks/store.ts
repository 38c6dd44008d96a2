/**
 * `openStore`: the Store handle (src/native/store-handle.ts) with this build's journal
 * migrations. Composition roots (command `run` methods, the hub, its task worker, doctor)
 * call it once and pass the Store down.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { Migration } from '../native/sqlite.js';
import { openNativeStore, type Store, type StoreMode } from '../native/store-handle.js';
import { WORKFLOW_JOURNAL_STEPS } from '../workflows/journal-migrations/index.js';
import { TASK_JOURNAL_STEPS } from './journal-migrations/index.js';

export type { Store, StoreMode };

/**
 * The journal's schema steps in version order, from each layer's steps keyed by version
 * (docs/architecture.md "Storage"). INTERNAL when two layers claim a version or one is missing:
 * the versions are 1..n, each owned by exactly one layer.
 */
export function composeJournalMigrations(layers: readonly ReadonlyMap<number, Migration>[]): Migration[] {
  const byVersion = new Map<number, Migration>();
  for (const steps of layers) {
    for (const [version, step] of steps) {
      if (byVersion.has(version))
        throw new AgentscmError('INTERNAL', `journal schema step ${version} is defined twice`);
      byVersion.set(version, step);
    }
  }
  const ordered: Migration[] = [];
  for (let version = 1; version <= byVersion.size; version++) {
    const step = byVersion.get(version);
    if (step === undefined) throw new AgentscmError('INTERNAL', `journal schema step ${version} is missing`);
    ordered.push(step);
  }
  return ordered;
}

/** The journal's migrations: the workflows layer's and the tasks layer's steps, in version order. */
export const JOURNAL_MIGRATIONS: readonly Migration[] = composeJournalMigrations([
  WORKFLOW_JOURNAL_STEPS,
  TASK_JOURNAL_STEPS,
]);

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
