/**
 * The name of a workspace's repository, for status output. Read-only on the caller's Store
 * (a status opens it in 'read' mode: no migration), and a store that cannot be read (moved, not
 * initialized, damaged) gives null rather than failing a status that needs only the workspace
 * database.
 */
import { AgentscmError } from '../contracts/errors.js';
import { getRepository } from '../native/repositories.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction, type Authority } from '../native/store.js';

export function readRepositoryName(store: Store, repository: string): string | null {
  let auth: Authority;
  try {
    auth = store.authority();
  } catch (error) {
    if (error instanceof AgentscmError) return null;
    throw error;
  }
  try {
    return readTransaction(auth, () => getRepository(auth, repository).name);
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'REPOSITORY_NOT_FOUND') return null;
    throw error;
  }
}
