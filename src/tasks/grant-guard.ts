/**
 * The grant guard of the local adapter (docs/agent-tasks.md "The grant guard and revocation";
 * docs/wire.md "Authority identity and grants": the local adapter derives the actor from --token-file, and
 * request JSON never selects it). A token is authenticated before the operation starts, again at
 * every guard entry, and the grant is rechecked inside every transition's native writer
 * reservation (TaskOrigin.recheck, called by transition.ts), which is the grant part of the
 * combined authorization callback: `grant revoke` and `grant rotate` are native writers,
 * so each either commits before that recheck — and the transition is refused — or waits for the
 * transition's journal commit.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { sameAgent, type AgentRef } from '../contracts/task/common.js';
import { readTokenFile } from '../native/grant-token-file.js';
import { authenticateToken, grantActor, grantOrigin, requireLiveOrigin, type LiveGrant } from '../native/grants.js';
import { resolveRepository } from '../native/repositories.js';
import { targetSubjectRecipe } from '../native/requirements.js';
import { resolveContextFlag } from '../native/review-contexts.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction, type Authority } from '../native/store.js';
import type { TaskGuard, TaskOperation, TaskOrigin } from './context.js';
import { decodeTaskCall } from './facade.js';

export interface GrantAuthorization {
  readonly grant: LiveGrant;
  /** The actor of the grant: the authenticated actor of every operation. */
  readonly actor: AgentRef;
  /** The repository id of the grant. */
  readonly repository: string;
  readonly guard: TaskGuard;
  readonly origin: TaskOrigin;
}

export interface AuthorizeInput {
  /** The caller's Store: the grant is authenticated through its authority. */
  readonly store: Store;
  /** The bearer token (read from --token-file by the caller). */
  readonly token: string;
  /** Repository id or name the caller asked for; it must be the grant's. */
  readonly repository?: string | undefined;
}

function notAuthorized(message: string, hint: string): AgentscmError {
  return new AgentscmError('TASK_NOT_AUTHORIZED', message, { hint });
}

/**
 * Authenticate `token` against the Store's authority (GRANT_TOKEN_REJECTED for a dead
 * token; TASK_NOT_AUTHORIZED for a reader grant or another repository) and build the guard and
 * origin every operation of this caller runs with.
 */
export function authorizeTaskToken(input: AuthorizeInput): GrantAuthorization {
  const read = <T>(fn: (auth: Authority) => T): T => {
    const auth = input.store.authority();
    return readTransaction(auth, () => fn(auth));
  };
  const grant = read((auth) => {
    const live = authenticateToken(auth, input.token);
    if (live.scope !== 'agent') {
      throw notAuthorized(
        `grant ${live.grant_id} has scope ${live.scope}; task operations need an agent grant`,
        'ask the operator for a grant with --scope agent',
      );
    }
    if (input.repository !== undefined) {
      const asked = resolveRepository(auth, input.repository);
      if (asked.id !== live.repository) {
        throw notAuthorized(
          `grant ${live.grant_id} is for repository ${live.repository}, not ${asked.id}`,
          'use a grant for that repository, or leave out --repository',
        );
      }
    }
    return live;
  });
  const actor = grantActor(grant);
  const origin = grantOrigin(grant);
  const guard: TaskGuard = <T>(who: AgentRef, _operation: TaskOperation, body: () => T): T => {
    if (!sameAgent(who, actor))
      throw notAuthorized(
        `the grant authenticates ${actor.owner_id}/${actor.agent_id}, not ${who.owner_id}/${who.agent_id}`,
        'call as the actor of your grant',
      );
    // A token names one generation of one grant, so a token that still authenticates is still
    // the origin's; a rotated or revoked one is GRANT_TOKEN_REJECTED here.
    read((auth) => authenticateToken(auth, input.token));
    return body();
  };
  return {
    grant,
    actor,
    repository: grant.repository,
    guard,
    origin: {
      origin,
      repository: grant.repository,
      recheck(auth: Authority): void {
        requireLiveOrigin(auth, origin);
      },
    },
  };
}

export interface TokenFileCall {
  readonly store: Store;
  /** --token-file: the grant's token file. */
  readonly tokenFile: string;
  readonly operation: string;
  readonly input: Uint8Array | null;
  readonly repository?: string | undefined;
  readonly profile: string;
  readonly target: string;
  /** --change and --context; a left-out context is the Change's sole current one. */
  readonly subject?: { readonly change_id: string; readonly context_digest?: string | undefined };
}

/**
 * `agentscm agent-task call` (docs/agent-tasks.md "Local adapter"): decode the request first
 * (a malformed document is refused before anything is read from the store), then read the token
 * file and authenticate its grant, then run the operation as the grant's actor, on the grant's
 * repository, with the grant guard and its origin recheck.
 */
export function callWithTokenFile(call: TokenFileCall): JsonValue {
  const decoded = decodeTaskCall(call.operation, call.input);
  const token = readTokenFile(call.tokenFile);
  const authorization = authorizeTaskToken({ store: call.store, token, repository: call.repository });
  return decoded.run({
    store: call.store,
    actor: authorization.actor,
    repository: authorization.repository,
    profile: call.profile,
    target: call.target,
    subject:
      call.subject === undefined
        ? undefined
        : {
            change_id: call.subject.change_id,
            context_digest: resolveContextFlag(call.store, {
              repository: authorization.repository,
              change: call.subject.change_id,
              context: call.subject.context_digest,
              subjectRecipe: (auth, repository) => targetSubjectRecipe(auth, repository, call.target),
            }),
          },
    guard: authorization.guard,
    origin: authorization.origin,
  });
}
