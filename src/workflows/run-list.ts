/**
 * `skill-workflow list` (docs/cli.md "Listing what is in the store"): every run of the journal with
 * its repository (name beside ID when the native store can say it), revision, state and step
 * count, oldest first. Read-only: a store without a journal has no runs; nothing is created.
 */
import { existsSync } from 'node:fs';

import { isAgentscmError } from '../contracts/errors.js';
import { listRepositories } from '../native/repositories.js';
import { isStoreInitialized, openAuthority, readTransaction } from '../native/store.js';
import { journalPaths, journalRead, journalStatement, openJournal, type RunState } from './journal.js';

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

function repositoryNames(dataDir: string): Map<string, string> {
  if (!isStoreInitialized(dataDir)) return new Map();
  try {
    const auth = openAuthority(dataDir, { mode: 'read' });
    try {
      return new Map(readTransaction(auth, () => listRepositories(auth)).map((r) => [r.id, r.name]));
    } finally {
      auth.close();
    }
  } catch (error) {
    if (isAgentscmError(error)) return new Map();
    throw error;
  }
}

/** Every run, oldest first. */
export function listRuns(dataDir: string): { runs: RunListItem[] } {
  // A store that never ran a workflow has no journal: no runs, and nothing is created.
  if (isStoreInitialized(dataDir) && !existsSync(journalPaths(dataDir).db)) return { runs: [] };
  const journal = openJournal(dataDir, 'read');
  try {
    const rows = journalRead(journal, () =>
      journalStatement(
        journal,
        'SELECT run_id, name, repository, revision, state, step_count, created_at_ms, updated_at_ms FROM workflow_runs ORDER BY created_at_ms, run_id',
      ).all(),
    ) as Omit<RunListItem, 'repository_name'>[];
    const names = repositoryNames(dataDir);
    return { runs: rows.map((row) => ({ ...row, repository_name: names.get(row.repository) ?? null })) };
  } finally {
    journal.close();
  }
}
