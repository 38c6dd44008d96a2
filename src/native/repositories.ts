/** Repositories of the native authority: a random 32-hex ID and a unique name (issue 2 §3). */
import { randomBytes } from 'node:crypto';

import { AgentscmError } from '../contracts/errors.js';
import { checkGenericId, checkRepositoryId, isRepositoryId } from './checks.js';
import { initPolicyEpoch } from './policy.js';
import { nextSeq, prepared, readTransaction, writeTransaction, type Authority } from './store.js';

export interface Repository {
  /** 32 lowercase hex. */
  readonly id: string;
  readonly name: string;
}

interface RepositoryRow {
  id: string;
  name: string;
}

function toRepository(row: RepositoryRow): Repository {
  return { id: row.id, name: row.name };
}

/** A fresh random repository ID: 16 bytes from the OS CSPRNG as 32 lowercase hex (docs/wire.md). */
export function newRepositoryId(): string {
  return randomBytes(16).toString('hex');
}

/** The repository with this ID (REPOSITORY_NOT_FOUND otherwise). */
export function getRepository(auth: Authority, id: string): Repository {
  checkRepositoryId(id);
  const row = prepared(auth, 'SELECT id, name FROM repositories WHERE id = ?').get(id) as RepositoryRow | undefined;
  if (row === undefined) {
    throw new AgentscmError('REPOSITORY_NOT_FOUND', `no repository ${id} in the native store`, {
      hint: 'check the repository ID and --data-dir',
    });
  }
  return toRepository(row);
}

/** The repository with this name, or null. */
export function findRepositoryByName(auth: Authority, name: string): Repository | null {
  checkGenericId(name, 'repository name');
  const row = prepared(auth, 'SELECT id, name FROM repositories WHERE name = ?').get(name) as RepositoryRow | undefined;
  return row === undefined ? null : toRepository(row);
}

/** Every repository, in creation order. */
export function listRepositories(auth: Authority): Repository[] {
  return (prepared(auth, 'SELECT id, name FROM repositories ORDER BY seq').all() as RepositoryRow[]).map(toRepository);
}

/**
 * Resolve a repository reference for a command: a 32-hex ID or a name; with no reference,
 * the only repository of the store. Several repositories and no reference is a usage error.
 */
export function resolveRepository(auth: Authority, reference: string | undefined): Repository {
  if (reference !== undefined) {
    if (isRepositoryId(reference)) return getRepository(auth, reference);
    const byName = findRepositoryByName(auth, reference);
    if (byName === null) {
      throw new AgentscmError('REPOSITORY_NOT_FOUND', `no repository named ${reference} in the native store`, {
        hint: 'pass a repository ID or an existing name',
      });
    }
    return byName;
  }
  const all = readTransaction(auth, () => listRepositories(auth));
  const [only] = all;
  if (only === undefined) {
    throw new AgentscmError('REPOSITORY_NOT_FOUND', 'the native store has no repository yet', {
      hint: 'run `agentscm init-repo PATH --name NAME` first',
    });
  }
  if (all.length > 1) {
    throw new AgentscmError('USAGE', `the native store holds ${all.length} repositories; say which one`, {
      hint: 'pass --repository ID_OR_NAME',
    });
  }
  return only;
}

/**
 * Register a repository with policy epoch 0 (issue 2 §3). A taken name is REPOSITORY_EXISTS.
 * Runs in the caller's write transaction, or its own.
 */
export function createRepository(auth: Authority, name: string, id: string = newRepositoryId()): Repository {
  checkGenericId(name, 'repository name');
  checkRepositoryId(id);
  return writeTransaction(auth, () => {
    if (findRepositoryByName(auth, name) !== null) {
      throw new AgentscmError('REPOSITORY_EXISTS', `a repository named ${name} already exists in this store`, {
        hint: 'choose another --name',
      });
    }
    const taken = prepared(auth, 'SELECT 1 FROM repositories WHERE id = ?').get(id);
    if (taken !== undefined) throw new AgentscmError('REPOSITORY_EXISTS', `repository ID ${id} is already registered`);
    prepared(auth, 'INSERT INTO repositories (id, name, seq) VALUES (?, ?, ?)').run(
      id,
      name,
      nextSeq(auth, 'repositories'),
    );
    initPolicyEpoch(auth, id);
    return { id, name };
  });
}
