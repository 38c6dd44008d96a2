/**
 * What every agent-task operation runs with (docs/agent-tasks.md "One core, thin adapters"): the
 * authenticated actor, the adapter's repository/profile/target and optional subject selection,
 * the caller-supplied authorization guard and a clock. Adapters (CLI now, HTTP and MCP later)
 * build one TaskContext and call the facade; none of them holds task logic.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { GrantOrigin } from '../contracts/grant.js';
import type { AgentRef } from '../contracts/task/common.js';
import type { Store } from '../native/store-handle.js';
import type { Authority } from '../native/store.js';

/** The facade's operation names (the capabilities list). */
export type TaskOperation =
  | 'cancel'
  | 'capabilities'
  | 'claim'
  | 'collector_claim'
  | 'collector_descriptor'
  | 'collector_finalize'
  | 'collector_upload'
  | 'heartbeat'
  | 'instructions'
  | 'next'
  | 'qualification'
  | 'reconcile'
  | 'recovery'
  | 'reference'
  | 'requirements'
  | 'result'
  | 'status'
  | 'subject';

/**
 * The authorization guard (docs/agent-tasks.md "Authorization guard and lock order": every
 * selection and read invokes a caller-supplied current authorization guard). It checks that
 * `actor` may perform `operation` now and, holding its own lock (the workspace lock of the hub
 * adapter), runs `body` and returns its value; it throws to refuse. For new transitions `body`
 * is the short journal + native transition, never external execution.
 */
export type TaskGuard = <T>(actor: AgentRef, operation: TaskOperation, body: () => T) => T;

/** A guard built from a plain check `(actor, operation) => void | throws`, holding no lock of its own. */
export function checkingGuard(check: (actor: AgentRef, operation: TaskOperation) => void): TaskGuard {
  return <T>(actor: AgentRef, operation: TaskOperation, body: () => T): T => {
    check(actor, operation);
    return body();
  };
}

/**
 * The in-process guard: the caller vouches for the actor and every operation is accepted. Only
 * code running inside the operator's own process uses it (tests, benchmarks); the CLI and the
 * hub authenticate a grant instead (src/tasks/grant-guard.ts).
 */
export const trustedLocalGuard: TaskGuard = checkingGuard(() => undefined);

/** A guard that refuses everything (tests and adapters whose credential was revoked). */
export function refusingGuard(reason: string): TaskGuard {
  return checkingGuard((actor, operation) => {
    throw new AgentscmError(
      'TASK_NOT_AUTHORIZED',
      `${actor.owner_id}/${actor.agent_id} may not call ${operation}: ${reason}`,
      { hint: 'ask the operator for access' },
    );
  });
}

/**
 * The live grant an operation runs under (docs/agent-tasks.md "The grant guard and revocation"),
 * the grant part of the combined authorization callback. Every transition calls `recheck` inside its
 * native writer reservation, after the journal transaction began: a grant revoked or rotated
 * before that point refuses the transition, and a revocation or rotation that comes later waits
 * for the reservation, so nothing commits under a dead grant.
 */
export interface TaskOrigin {
  readonly origin: GrantOrigin;
  /** The repository the grant is for: the only one whose tasks the operation may touch. */
  readonly repository: string;
  /** Throws unless the grant is still live at the same generation (through this connection). */
  recheck(auth: Authority): void;
}

export interface TaskContext {
  /**
   * The one Store of the caller (a command opens it for the operation's mode, the hub keeps one
   * open across calls); every read and transition goes through it.
   */
  readonly store: Store;
  /** The authenticated actor (never taken from request JSON). */
  readonly actor: AgentRef;
  /** Repository id or name; undefined → the only repository of the store. */
  readonly repository?: string | undefined;
  /** Workflow task profile id. */
  readonly profile: string;
  /** Protected target whose installed requirement tasks are derived from. */
  readonly target: string;
  /**
   * The Change and review context of the subject; needed by requirements, next, and by claim,
   * instructions and reference of a task not yet retained.
   */
  readonly subject?: { readonly change_id: string; readonly context_digest: string } | undefined;
  readonly guard: TaskGuard;
  /** The grant the actor was authenticated by; absent only for the in-process guard. */
  readonly origin?: TaskOrigin | undefined;
  /** Milliseconds since the epoch; injectable so that lease expiry is tested without sleeping. */
  readonly now?: (() => number) | undefined;
}

export function nowOf(ctx: TaskContext): number {
  return ctx.now === undefined ? Date.now() : ctx.now();
}
