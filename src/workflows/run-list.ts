/**
 * `skill-workflow list` (docs/cli.md "Listing what is in the store"): every run of the journal with
 * its repository (name beside ID when the native store can say it), revision, state and step
 * count, oldest first. Read-only: a store without a journal has no runs; nothing is created.
 */
import { isAgentscmError } from '../contracts/errors.js';
import { listRepositories } from '../native/repositories.js';
import type { Store } from '../native/store-handle.js';
import { isStoreInitialized, readTransaction } from '../native/store.js';
import { journalRead, journalStatement, type RunState } from './journal.js';

export interface RunListItem {
  readonly run_id: string;
  readonly name: string;
  readonly repository: string;
  /** The repository's name, or null when the native store cannot be read. */
  readonly repository_name: string | null;
  readonly revision: string;
  readonly state: RunState;
  readonly step_count: number;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

function repositoryNames(store: Store): Map<string, string> {
  if (!isStoreInitialized(store.dataDir)) return new Map();
  try {
    const auth = store.authority();
    return new Map(readTransaction(auth, () => listRepositories(auth)).map((r) => [r.id, r.name]));
  } catch (error) {
    if (isAgentscmError(error)) return new Map();
    throw error;
  }
}

/** Every run, oldest first. */
export function listRuns(store: Store): { runs: RunListItem[] } {
  // A store that never ran a workflow has no journal: no runs, and nothing is created.
  const journal = isStoreInitialized(store.dataDir) ? store.journal() : store.requireJournal();
  if (journal === null) return { runs: [] };
  const rows = journalRead(journal, () =>
    journalStatement(
      journal,
      'SELECT run_id, name, repository, revision, state, step_count, created_at_ms, updated_at_ms' +
        ' FROM workflow_runs ORDER BY created_at_ms, run_id',
    ).all(),
  ) as Omit<RunListItem, 'repository_name'>[];
  const names = repositoryNames(store);
  return { runs: rows.map((row) => ({ ...row, repository_name: names.get(row.repository) ?? null })) };
}
