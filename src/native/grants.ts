/**
 * Grants (docs/wire.md "Authority identity and grants"; docs/grants.md "Grants"):
 * `{grant_id, repository_id, owner_id, agent_id, generation}` plus a scope. Every task operation
 * runs as the actor of a live grant, authenticated by the SHA-256 of its bearer token — the only
 * form of the token the authority keeps. Rotation raises the generation and the old token dies
 * at that commit; revocation is final. Both are native writer transactions, so they serialize
 * with every task transition that rechecks its grant inside its native writer reservation
 * (src/tasks/grant-guard.ts).
 */
import { randomBytes } from 'node:crypto';

import { AgentscmError } from '../contracts/errors.js';
import {
  formatGrantToken,
  GRANT_TOKEN_BYTES,
  grantTokenSha256,
  type GrantOrigin,
  type GrantScope,
} from '../contracts/grant.js';
import { validateId } from '../contracts/ids.js';
import type { AgentRef } from '../contracts/task/common.js';
import { checkNewTokenFile, removeCreatedDirectories, removeTokenFile, writeTokenFile } from './grant-token-file.js';
import { resolveRepository } from './repositories.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import type { Store } from './store-handle.js';
import { prepared, readTransaction, writeTransaction, type Authority } from './store.js';

/** A grant as the authority holds it (no token, no hash). */
export interface Grant {
  readonly grant_id: string;
  readonly repository: string;
  readonly owner_id: string;
  readonly agent_id: string;
  readonly scope: GrantScope;
  readonly generation: bigint;
  readonly state: 'live' | 'revoked';
  readonly created_at_ms: number;
  readonly changed_at_ms: number;
}

/** A grant whose token was just accepted: live, at the token's generation. */
export type LiveGrant = Grant & { readonly state: 'live' };

interface GrantRow {
  grant_id: string;
  repository: string;
  owner_id: string;
  agent_id: string;
  scope: string;
  generation: string;
  revoked: number;
  created_at_ms: number;
  changed_at_ms: number;
}

const GRANT_COLUMNS =
  'g.grant_id, g.repository, g.owner_id, g.agent_id, g.scope, g.generation, g.revoked, g.created_at_ms, ' +
  'g.changed_at_ms';

function grantOf(row: GrantRow): Grant {
  if (row.scope !== 'agent' && row.scope !== 'reader')
    throw new AgentscmError('STORE_CORRUPT', `grant ${row.grant_id} has an unknown scope`);
  return {
    grant_id: row.grant_id,
    repository: row.repository,
    owner_id: row.owner_id,
    agent_id: row.agent_id,
    scope: row.scope,
    generation: u64FromSql(row.generation),
    state: row.revoked === 1 ? 'revoked' : 'live',
    created_at_ms: row.created_at_ms,
    changed_at_ms: row.changed_at_ms,
  };
}

/** The actor of a grant. */
export function grantActor(grant: Grant): AgentRef {
  return { owner_id: grant.owner_id, agent_id: grant.agent_id };
}

/** The live origin a grant gives the operations it authenticates (docs/wire.md "Collector descriptor" `origin`). */
export function grantOrigin(grant: Grant): GrantOrigin {
  return {
    owner_id: grant.owner_id,
    agent_id: grant.agent_id,
    grant_id: grant.grant_id,
    grant_generation: grant.generation,
  };
}

/** One grant by id (GRANT_NOT_FOUND). */
export function getGrant(auth: Authority, grantId: string): Grant {
  validateId(grantId, 'grant id');
  return readTransaction(auth, () => {
    const row = prepared(auth, `SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.grant_id = ?`).get(grantId) as
      GrantRow | undefined;
    if (row === undefined)
      throw new AgentscmError('GRANT_NOT_FOUND', `no grant ${grantId} in the native store`, {
        hint: 'list the grants with `agentscm grant list`',
      });
    return grantOf(row);
  });
}

/** Every grant, oldest first; only those of `repository` when given. */
export function listGrants(auth: Authority, repository: string | null): Grant[] {
  return readTransaction(auth, () => {
    const rows =
      repository === null
        ? (prepared(auth, `SELECT ${GRANT_COLUMNS} FROM grants g ORDER BY g.seq`).all() as GrantRow[])
        : (prepared(auth, `SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.repository = ? ORDER BY g.seq`).all(
            repository,
          ) as GrantRow[]);
    return rows.map(grantOf);
  });
}

function rejected(reason: 'unknown' | 'rotated' | 'revoked', grantId: string | null): AgentscmError {
  const messages = {
    unknown: 'the token belongs to no grant of this authority',
    rotated: `the token belongs to an older generation of grant ${grantId ?? ''}; the grant was rotated`,
    revoked: `grant ${grantId ?? ''} was revoked`,
  };
  return new AgentscmError('GRANT_TOKEN_REJECTED', messages[reason], {
    hint:
      reason === 'rotated'
        ? 'use the token file written by the latest `grant rotate`'
        : 'ask the operator for a grant (`agentscm grant create`)',
    details: { reason, ...(grantId === null ? {} : { grant_id: grantId }) },
  });
}

/**
 * Authenticate a bearer token (docs/grants.md "Authentication": the task actor and live origin
 * grant come from the credential): the live grant whose current
 * generation has this token, or GRANT_TOKEN_REJECTED naming why (unknown, rotated, revoked).
 * Run it inside the caller's authority transaction to hold the answer for that transaction.
 */
export function authenticateToken(auth: Authority, token: string): LiveGrant {
  const hash = grantTokenSha256(token);
  return readTransaction(auth, () => {
    const row = prepared(
      auth,
      `SELECT ${GRANT_COLUMNS}, t.generation AS token_generation FROM grant_tokens t JOIN grants g ON ` +
        `g.grant_id = t.grant_id WHERE t.token_sha256 = ?`,
    ).get(hash) as (GrantRow & { token_generation: string }) | undefined;
    if (row === undefined) throw rejected('unknown', null);
    const grant = grantOf(row);
    if (grant.state === 'revoked') throw rejected('revoked', grant.grant_id);
    if (row.token_generation !== row.generation) throw rejected('rotated', grant.grant_id);
    return grant as LiveGrant;
  });
}

/**
 * The origin grant is still live at the same generation
 * (docs/admission.md "What is rechecked, and why": an authority-owned live authorization guard for
 * every originating actor and grant); GRANT_NOT_LIVE otherwise. Run it inside the caller's
 * authority transaction.
 */
export function requireLiveOrigin(auth: Authority, origin: GrantOrigin): LiveGrant {
  let grant: Grant;
  try {
    grant = getGrant(auth, origin.grant_id);
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'GRANT_NOT_FOUND') {
      throw new AgentscmError('GRANT_NOT_LIVE', `origin grant ${origin.grant_id} does not exist in this authority`, {
        details: { grant_id: origin.grant_id },
      });
    }
    throw error;
  }
  const why =
    grant.state === 'revoked'
      ? 'it was revoked'
      : grant.generation !== origin.grant_generation
        ? `it is at generation ${grant.generation}, not ${origin.grant_generation}`
        : grant.owner_id !== origin.owner_id || grant.agent_id !== origin.agent_id
          ? 'it belongs to another actor'
          : null;
  if (why !== null) {
    throw new AgentscmError('GRANT_NOT_LIVE', `origin grant ${origin.grant_id} is no longer live: ${why}`, {
      hint: 'the operation began under a grant that was revoked or rotated since; nothing was changed',
      details: { grant_id: origin.grant_id, grant_generation: origin.grant_generation.toString() },
    });
  }
  return grant as LiveGrant;
}

function newToken(): string {
  return formatGrantToken(new Uint8Array(randomBytes(GRANT_TOKEN_BYTES)));
}

function newGrantId(): string {
  return `g-${randomBytes(16).toString('hex')}`;
}

/**
 * Write the token file (creating its missing directories 0700), then run `commit`; a commit that
 * fails removes the file and those directories again, so that no token file names a token the
 * authority never accepted.
 */
function withNewTokenFile<T>(tokenFile: string, commit: (hash: string, file: string) => T): T & TokenFileDirs {
  const token = newToken();
  const written = writeTokenFile(tokenFile, token);
  try {
    return { ...commit(grantTokenSha256(token), written.file), created_directories: [...written.createdDirectories] };
  } catch (error) {
    removeTokenFile(written.file);
    removeCreatedDirectories(written.createdDirectories);
    throw error;
  }
}

interface TokenFileDirs {
  /** Directories created for the token file, top-down, each 0700 (empty when none were missing). */
  readonly created_directories: string[];
}

export interface CreateGrantInput {
  /** Repository id or name; omitted → the only repository of the store. */
  readonly repository?: string | undefined;
  readonly actor: AgentRef;
  readonly scope: GrantScope;
  readonly tokenFile: string;
  readonly nowMs: number;
}

export interface GrantWithTokenFile extends TokenFileDirs {
  readonly grant: Grant;
  /** Absolute path of the new token file (0600); the token itself is never returned. */
  readonly token_file: string;
}

/** `grant create`: a new live grant at generation 1 whose token is written to a new 0600 file. */
export function createGrant(auth: Authority, input: CreateGrantInput): GrantWithTokenFile {
  validateId(input.actor.owner_id, 'actor owner');
  validateId(input.actor.agent_id, 'actor agent');
  const repository = readTransaction(auth, () => resolveRepository(auth, input.repository)).id;
  checkNewTokenFile(input.tokenFile);
  const grantId = newGrantId();
  return withNewTokenFile(input.tokenFile, (hash, file) =>
    writeTransaction(auth, () => {
      resolveRepository(auth, repository);
      const seq = (prepared(auth, 'SELECT coalesce(max(seq), 0) + 1 AS next FROM grants').get() as { next: number })
        .next;
      const generation = u64ToSql(1n);
      prepared(
        auth,
        `INSERT INTO grants (grant_id, repository, owner_id, agent_id, scope, generation, token_sha256, revoked,
          created_at_ms, changed_at_ms, seq)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
      ).run(
        grantId,
        repository,
        input.actor.owner_id,
        input.actor.agent_id,
        input.scope,
        generation,
        hash,
        input.nowMs,
        input.nowMs,
        seq,
      );
      prepared(auth, 'INSERT INTO grant_tokens (token_sha256, grant_id, generation) VALUES (?, ?, ?)').run(
        hash,
        grantId,
        generation,
      );
      return { grant: getGrant(auth, grantId), token_file: file };
    }),
  );
}

export interface RotateResult extends GrantWithTokenFile {
  readonly previous_generation: bigint;
}

/** `grant rotate`: generation + 1 with a new token in a new file; the old token dies at this commit. */
export function rotateGrant(auth: Authority, grantId: string, tokenFile: string, nowMs: number): RotateResult {
  const before = getGrant(auth, grantId);
  if (before.state === 'revoked') throw revokedGrant(grantId);
  checkNewTokenFile(tokenFile);
  return withNewTokenFile(tokenFile, (hash, file) =>
    writeTransaction(auth, () => {
      const current = getGrant(auth, grantId);
      if (current.state === 'revoked') throw revokedGrant(grantId);
      if (current.generation === 18446744073709551615n)
        throw new AgentscmError('INTERNAL', 'grant generation exhausted');
      const generation = u64ToSql(current.generation + 1n);
      prepared(auth, 'UPDATE grants SET generation = ?, token_sha256 = ?, changed_at_ms = ? WHERE grant_id = ?').run(
        generation,
        hash,
        nowMs,
        grantId,
      );
      prepared(auth, 'INSERT INTO grant_tokens (token_sha256, grant_id, generation) VALUES (?, ?, ?)').run(
        hash,
        grantId,
        generation,
      );
      return { grant: getGrant(auth, grantId), token_file: file, previous_generation: current.generation };
    }),
  );
}

function revokedGrant(grantId: string): AgentscmError {
  return new AgentscmError(
    'GRANT_REVOKED',
    `grant ${grantId} was revoked; a revoked grant is never rotated or used again`,
    { hint: 'create a new grant' },
  );
}

export interface RevokeGrantResult {
  readonly grant: Grant;
  /** True when it had been revoked before; nothing changed. */
  readonly already_revoked: boolean;
}

/** `grant revoke`: final; every token of the grant dies at this commit. Revoking twice changes nothing and says so. */
export function revokeGrant(auth: Authority, grantId: string, nowMs: number): RevokeGrantResult {
  validateId(grantId, 'grant id');
  return writeTransaction(auth, () => {
    const current = getGrant(auth, grantId);
    if (current.state === 'revoked') return { grant: current, already_revoked: true };
    prepared(auth, 'UPDATE grants SET revoked = 1, changed_at_ms = ? WHERE grant_id = ?').run(nowMs, grantId);
    return { grant: getGrant(auth, grantId), already_revoked: false };
  });
}

/**
 * `agentscm grant create` on the command's write Store. The authority is opened on first use,
 * so the checks of the input come before STORE_NOT_INITIALIZED as they always did.
 */
export function createGrantInStore(store: Store, input: CreateGrantInput): GrantWithTokenFile {
  return createGrant(store.authority(), input);
}

/** `agentscm grant rotate` on the command's write Store (the grant id is checked before the store is opened). */
export function rotateGrantInStore(store: Store, grantId: string, tokenFile: string, nowMs: number): RotateResult {
  validateId(grantId, 'grant id');
  return rotateGrant(store.authority(), grantId, tokenFile, nowMs);
}

/** `agentscm grant revoke` on the command's write Store (the grant id is checked before the store is opened). */
export function revokeGrantInStore(store: Store, grantId: string, nowMs: number): RevokeGrantResult {
  validateId(grantId, 'grant id');
  return revokeGrant(store.authority(), grantId, nowMs);
}

/** `agentscm grant list` on the command's read Store. */
export function listGrantsInStore(store: Store, repository: string | undefined): Grant[] {
  const auth = store.authority();
  return readTransaction(auth, () =>
    listGrants(auth, repository === undefined ? null : resolveRepository(auth, repository).id),
  );
}
