/**
 * The messages between the hub's main thread (src/hub/task-worker-client.ts) and its task worker
 * thread (src/hub/task-worker.ts), docs/hub.md "The task worker". Both sides import this module;
 * neither imports the other.
 *
 * A request of the agent-tasks route is two messages: `authorize` before its body is read (so a
 * caller that is not authenticated is refused before a byte of body is buffered, as on every
 * route), then `call` with the decoded envelope, which runs under the authorization that
 * `authorize` made and the worker holds under the request's id (`release` drops it when the body
 * is refused). The worker answers `call` with the route's whole JSON answer text, or either
 * message with the refusal as a wire error that becomes the same AgentscmError again. The upload
 * route (`authorize` then `upload`), the workspace MCP tools (`authorize`, then one `call` per
 * tool call), the legacy MCP endpoint (`reader`, `workflow-status`), the dashboard (`ui`) and
 * health (`ping`) go through a worker the same way, so the main thread never runs store work
 * (docs/hub.md "A busy store").
 */
import { AgentscmError, type ErrorCode } from '../contracts/errors.js';
import type { HubProfile } from './config.js';
import type { ObjectAsk } from './object-reads.js';
import type { HubTaskCall } from './task-call.js';

/** Marks the workerData of a task worker, so that the worker entry serves only when started as one. */
export const TASK_WORKER_KIND = 'agentscm-hub-task-worker';

export interface TaskWorkerData {
  readonly kind: typeof TASK_WORKER_KIND;
  /** The hub config's profiles; requests name one by its index. */
  readonly profiles: readonly HubProfile[];
  /**
   * How long after a request was sent its store work may still wait for another writer's lock
   * (docs/hub.md "A busy store"): each request runs with the busy timeout that is left of it, so
   * a request queued behind a held lock answers STORE_BUSY by then instead of 5 s later.
   */
  readonly busyBudgetMs: number;
  /** Test fault injection: the worker thread exits (code 70) when asked to call this operation. */
  readonly exitOnOperation?: string | undefined;
}

/**
 * What a `call` answers: the agent-tasks route's whole JSON text, or the JSON text of the facade's result alone (an MCP
 * tool).
 */
export type CallAnswer = 'route' | 'tool';

/** A dashboard request as the main thread received it (src/hub/ui-api.ts serves it in the worker). */
export interface UiWorkerRequest {
  readonly pathname: string;
  readonly search: string;
  readonly nowMs: number;
}

/** A dashboard answer as it crosses the thread boundary. */
export type UiWorkerAnswer =
  | { readonly kind: 'json'; readonly body: string }
  | { readonly kind: 'download'; readonly body: Uint8Array; readonly filename: string };

/** Every request but release and close carries `sentAt`, the main thread's Date.now() when it sent it. */
export type TaskWorkerRequest =
  /** Authorize `token` for the profile and hold the authorization under `id`; answered with a null body. */
  | {
      readonly kind: 'authorize';
      readonly id: number;
      readonly sentAt: number;
      readonly profile: number;
      readonly token: string;
    }
  /**
   * Run the call under the authorization held under `held` (taken and dropped), or, when the
   * worker holds none under it (it is not the worker that made it), one made afresh for `token`.
   */
  | {
      readonly kind: 'call';
      readonly id: number;
      readonly sentAt: number;
      readonly held: number;
      readonly profile: number;
      readonly token: string;
      readonly call: HubTaskCall;
      readonly answer: CallAnswer;
    }
  /**
   * Import a collector transfer envelope (the upload route) under the held authorization, as `call` does; answered with
   * the view's JSON text.
   */
  | {
      readonly kind: 'upload';
      readonly id: number;
      readonly sentAt: number;
      readonly held: number;
      readonly profile: number;
      readonly token: string;
      readonly envelope: Uint8Array;
    }
  /**
   * Authenticate a reader grant (legacy /mcp); answered with the index of its data directory in the profiles' distinct
   * data directories.
   */
  | {
      readonly kind: 'reader';
      readonly id: number;
      readonly sentAt: number;
      readonly token: string;
      readonly endpoint: string;
    }
  /** The legacy tool agentscm_workflow_status for a reader token; answered with the view's JSON text. */
  | {
      readonly kind: 'workflow-status';
      readonly id: number;
      readonly sentAt: number;
      readonly token: string;
      readonly runId: string;
    }
  /** One dashboard JSON route (reader token); answered with a UiWorkerAnswer as `value`. */
  | {
      readonly kind: 'ui';
      readonly id: number;
      readonly sentAt: number;
      readonly token: string;
      readonly request: UiWorkerRequest;
    }
  /**
   * Objects of a claimed revision (the object routes) under the held authorization, as `call` does; answered with the
   * bytes as `bytes`.
   */
  | {
      readonly kind: 'objects';
      readonly id: number;
      readonly sentAt: number;
      readonly held: number;
      readonly profile: number;
      readonly token: string;
      readonly ask: ObjectAsk;
    }
  /** A read of each configured store (health); answered with a null body. */
  | { readonly kind: 'ping'; readonly id: number; readonly sentAt: number }
  /** Drop the authorization held under `held` (its request was refused before its call). */
  | { readonly kind: 'release'; readonly held: number }
  /** Close the worker's connections and end the thread. */
  | { readonly kind: 'close' };

/** An AgentscmError as it crosses the thread boundary: everything but its stack and cause. */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly hint?: string | undefined;
  readonly details?: Record<string, unknown> | undefined;
}

export type TaskWorkerReply =
  /** The worker loaded and listens. */
  | { readonly kind: 'ready' }
  | {
      readonly kind: 'answer';
      readonly id: number;
      readonly body: string | null;
      readonly value?: UiWorkerAnswer | number | undefined;
      readonly bytes?: Uint8Array | undefined;
    }
  | { readonly kind: 'refusal'; readonly id: number; readonly error: WireError };

export function wireErrorOf(error: AgentscmError): WireError {
  return { code: error.code, message: error.message, hint: error.hint, details: error.details };
}

export function errorOfWire(wire: WireError): AgentscmError {
  return new AgentscmError(wire.code, wire.message, { hint: wire.hint, details: wire.details });
}
