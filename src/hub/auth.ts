/**
 * Authentication of hub requests (docs/wire.md "Hub" and "Authority identity and grants";
 * docs/hub.md "Authentication": the server derives the task actor and live origin grant from the
 * workspace bearer credential). Every request is authenticated anew against the authority, so a
 * revoked or rotated token fails the very next request, in or out of an MCP session. The grant
 * guard of src/tasks/grant-guard.ts does the grant part; this module adds the transport rules: the
 * bearer header, the profile's repository, the legacy endpoint's reader scope.
 */
import type { IncomingMessage } from 'node:http';

import { AgentscmError, isAgentscmError, type ErrorCode } from '../contracts/errors.js';
import { grantTokenSha256 } from '../contracts/grant.js';
import { authenticateToken, type LiveGrant } from '../native/grants.js';
import { findTargetRequirement } from '../native/requirements.js';
import { contentToken } from '../native/sqlite.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction } from '../native/store.js';
import { authorizeTaskToken, type GrantAuthorization } from '../tasks/grant-guard.js';
import type { HubProfile } from './config.js';

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;

/** The bearer token of the request (HUB_AUTH_REQUIRED when there is none). */
export function bearerToken(req: IncomingMessage): string {
  const header = req.headers.authorization;
  const match = header === undefined ? null : BEARER.exec(header);
  if (match?.[1] === undefined) {
    throw new AgentscmError('HUB_AUTH_REQUIRED', 'the request has no Authorization: Bearer header with a grant token', {
      hint: 'send Authorization: Bearer TOKEN with the token of an `agentscm grant create` file',
    });
  }
  return match[1];
}

/** The refusals authentication itself answers; anything else while authenticating is a store the hub cannot read. */
const AUTHENTICATION_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'HUB_AUTH_REQUIRED',
  'GRANT_TOKEN_INVALID',
  'GRANT_TOKEN_REJECTED',
  'GRANT_NOT_LIVE',
  'TASK_NOT_AUTHORIZED',
  'HUB_GRANT_SCOPE_MISMATCH',
  'HUB_REQUIREMENT_CHANGED',
  'STORE_BUSY',
]);

/**
 * What a failure while authenticating answers (docs/hub.md "What an answer never says"): a
 * refusal of the token as it is; any other failure (a store deleted, damaged or unreadable since
 * start-up) HUB_PROFILE_UNAVAILABLE (503), so that a caller not yet authenticated learns nothing
 * of the store — not its code, not its path. The original message stays in the error for the
 * hub's log.
 */
export function authenticationFailure(error: unknown): AgentscmError {
  if (error instanceof AgentscmError && AUTHENTICATION_CODES.has(error.code)) return error;
  const why =
    error instanceof AgentscmError
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
  return new AgentscmError(
    'HUB_PROFILE_UNAVAILABLE',
    `the hub cannot authenticate the request: a configured store cannot be read (${why})`,
    {
      hint: 'the operator checks the data_dir of each hub profile',
      cause: error,
    },
  );
}

/**
 * An agent grant for the profile's repository (GRANT_TOKEN_REJECTED for a dead token,
 * TASK_NOT_AUTHORIZED for a reader grant or another repository), then the profile's pinned
 * requirement (HUB_REQUIREMENT_CHANGED): only an authenticated caller learns whether it moved.
 */
export function authorizeProfile(profile: HubProfile, token: string, store: Store): GrantAuthorization {
  const authorization = authorizeTaskToken({
    store,
    token,
    repository: profile.nativeRepository,
  });
  requirePinnedRequirement(profile, store);
  return authorization;
}

/** How many authorizations a ProfileAuthorizations keeps before it starts afresh. */
const AUTHORIZATIONS_LIMIT = 1024;

/**
 * The authorizations of authorizeProfile that the hub made on one authority connection, each
 * reused while the connection's content token (`PRAGMA data_version` and `total_changes()`,
 * docs/agent-tasks.md "Rechecks") is the one it was made under. Every fact authorizeProfile
 * reads — the grant, its generation and scope, the token's generation, the repository, the
 * target's installed requirement — is a row of the authority, and every command that changes
 * one (`grant revoke`, `grant rotate`, `requirement install`, …) commits to it, which changes
 * the token; so an unchanged token proves the answer unchanged, and a revocation or rotation
 * still fails the very next request. The token is read on every request, by one statement
 * outside any transaction (its own snapshot). Refusals are never kept. The grant guard and the
 * transition's recheck of the origin run inside the facade as before.
 */
export class ProfileAuthorizations {
  private token: string | null = null;
  private readonly known = new Map<string, GrantAuthorization>();

  /** authorizeProfile, or the authorization it answered under the current content token. */
  authorize(profile: HubProfile, bearer: string, store: Store): GrantAuthorization {
    try {
      return this.authorizeKnown(profile, bearer, store);
    } catch (error) {
      throw authenticationFailure(error);
    }
  }

  private authorizeKnown(profile: HubProfile, bearer: string, store: Store): GrantAuthorization {
    const db = store.authority().db;
    if (db.inTransaction) return authorizeProfile(profile, bearer, store);
    const token = contentToken(db);
    if (token !== this.token) {
      this.known.clear();
      this.token = token;
    }
    const key = `${profile.repositoryId}\u0000${profile.profileId}\u0000${grantTokenSha256(bearer)}`;
    const known = this.known.get(key);
    if (known !== undefined) return known;
    const authorization = authorizeProfile(profile, bearer, store);
    // Kept under the token read before the reads above: a commit in between changes the token
    // the next request reads, and that request authorizes afresh.
    if (this.known.size >= AUTHORIZATIONS_LIMIT) this.known.clear();
    this.known.set(key, authorization);
    return authorization;
  }
}

/** The target's installed requirement is still the one the profile pins. */
export function requirePinnedRequirement(profile: HubProfile, store: Store): void {
  const auth = store.authority();
  const installed = readTransaction(auth, () => findTargetRequirement(auth, profile.nativeRepository, profile.target));
  if (installed?.requirement_digest !== profile.requirementDigest) {
    throw new AgentscmError(
      'HUB_REQUIREMENT_CHANGED',
      `target ${profile.target} of profile ${profile.profileId} requires ` +
        `${installed === null ? 'nothing' : installed.requirement_digest}, not the pinned ` +
        `${profile.requirementDigest}`,
      { hint: 'the operator updates requirement_digest in the hub config and restarts the hub' },
    );
  }
}

/**
 * A reader grant for the legacy endpoint, looked up in the read-only Store of each configured
 * data directory in turn (a token is 256 random bits, so at most one authority knows it); the
 * answer names the Store that knew it. An agent grant is HUB_GRANT_SCOPE_MISMATCH: reader and
 * agent credentials never reach each other's tools.
 */
export function authorizeReader(
  readers: ReadonlyMap<string, Store>,
  token: string,
  endpoint = 'the legacy /mcp endpoint',
): { grant: LiveGrant; store: Store } {
  try {
    return authorizeReaderIn(readers, token, endpoint);
  } catch (error) {
    throw authenticationFailure(error);
  }
}

function authorizeReaderIn(
  readers: ReadonlyMap<string, Store>,
  token: string,
  endpoint: string,
): { grant: LiveGrant; store: Store } {
  let lastRejection: AgentscmError | null = null;
  for (const store of readers.values()) {
    try {
      const auth = store.authority();
      const grant = readTransaction(auth, () => authenticateToken(auth, token));
      if (grant.scope !== 'reader') {
        throw new AgentscmError(
          'HUB_GRANT_SCOPE_MISMATCH',
          `grant ${grant.grant_id} has scope ${grant.scope}; only reader grants reach ${endpoint}`,
          {
            hint:
              'use the workspace MCP endpoint /v1/hub/workspace/mcp with an agent grant, or a grant created ' +
              'with --scope reader here',
          },
        );
      }
      return { grant, store };
    } catch (error) {
      if (!isAgentscmError(error, 'GRANT_TOKEN_REJECTED')) throw error;
      // A token this authority does not know may be another's; one it knows as revoked or
      // rotated is final.
      if (error.details?.reason !== 'unknown') throw error;
      lastRejection = error;
    }
  }
  throw (
    lastRejection ??
    new AgentscmError('GRANT_TOKEN_REJECTED', 'the token belongs to no grant of this hub', {
      hint: 'ask the operator for a reader grant',
    })
  );
}
