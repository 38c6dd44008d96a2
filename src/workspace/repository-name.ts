/**
 * The name of a workspace's repository, for status output. Read-only: the authority is opened
 * for reading with no migration, and a store that cannot be read (moved, not initialized,
 * damaged) gives null rather than failing a status that needs only the workspace database.
 */
import { AgentscmError } from '../contracts/errors.js';
import { getRepository } from '../native/repositories.js';
import { openAuthority, readTransaction } from '../native/store.js';

export function readRepositoryName(dataDir: string, repository: string): string | null {
  let auth;
  try {
    auth = openAuthority(dataDir, { mode: 'read' });
  } catch (error) {
    if (error instanceof AgentscmError) return null;
    throw error;
  }
  try {
    return readTransaction(auth, () => getRepository(auth, repository).name);
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'REPOSITORY_NOT_FOUND') return null;
    throw error;
  } finally {
    auth.close();
  }
}
