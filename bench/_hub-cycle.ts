/**
 * The hub bench's cycle, shared by bench/hub.bench.ts and bench/history.bench.ts: 32 clients,
 * each with its own agent grant, on a store whose requirement has one command step per client;
 * each operation authenticates the grant and calls the facade, as the hub does per request.
 */
import { encodeCanonical } from '../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../src/contracts/json/json-value.js';
import { callTaskOperation } from '../src/tasks/facade.js';
import { authorizeTaskToken } from '../src/tasks/grant-guard.js';
import { openStore, type Store } from '../src/tasks/store.js';
import { grantFor, hubStore, type HubStore, type TestGrant } from '../test/support/hub.js';
import {
  assertionRequest,
  claimedOf,
  claimRequest,
  mutationRequest,
  type TaskRef,
} from '../test/support/task-requests.js';
import { CHANGE_ID, PROFILE, type StepSpec } from '../test/support/tasks.js';

export const CLIENTS = 32;
export const STEPS: StepSpec[] = Array.from({ length: CLIENTS }, (_, i) => ({
  id: `step-${i}`,
  kind: 'command' as const,
}));

/** A minimal test context for the fixtures (the bench removes its own directory). */
function benchContext(): Parameters<typeof hubStore>[0] {
  return { after: () => undefined } as unknown as Parameters<typeof hubStore>[0];
}

export interface Side {
  readonly hub: HubStore;
  readonly grants: readonly TestGrant[];
  /** Kept open across calls, as the hub keeps its own (src/tasks/store.ts). */
  readonly connections: Store;
}

export function makeSide(): Side {
  const hub = hubStore(benchContext(), STEPS);
  const grants = Array.from({ length: CLIENTS }, (_, i) => grantFor(hub, `owner${i}`, `agent${i}`));
  return { hub, grants, connections: openStore(hub.store.dataDir, { mode: 'write' }) };
}

/** One facade call as the hub makes it: authenticate the grant, then call the operation. */
export function facadeCall(side: Side, grant: TestGrant, operation: string, input: JsonValue): JsonObject {
  const authorization = authorizeTaskToken({
    store: side.connections,
    token: grant.token,
    repository: side.hub.store.repository,
  });
  return callTaskOperation(
    {
      store: side.connections,
      actor: authorization.actor,
      repository: side.hub.store.repository,
      profile: PROFILE,
      target: 'main',
      subject: { change_id: CHANGE_ID, context_digest: side.hub.store.contextDigest },
      guard: authorization.guard,
      origin: authorization.origin,
    },
    operation,
    input === null ? null : encodeCanonical(input),
  ) as JsonObject;
}

/** The task rows of a `requirements` answer. */
export function taskRefsOf(answer: JsonObject): TaskRef[] {
  return (answer.tasks as JsonObject[]).map((row) => ({
    task_id: row.task_id as string,
    task_digest: row.task_digest as string,
  }));
}

/** The 32 tasks of the store's current subject, in step order (untimed; fresh connections). */
export function freshTasks(side: Side, token: string): TaskRef[] {
  const store = openStore(side.hub.store.dataDir, { mode: 'write' });
  const grant = side.grants.find((g) => g.token === token);
  if (grant === undefined) throw new Error('no such grant');
  return taskRefsOf(facadeCall({ ...side, connections: store }, grant, 'requirements', null));
}

/** One in-process cycle: claim -> heartbeat -> result, each authenticated as the hub does. */
export function facadeCycle(side: Side, grant: TestGrant, task: TaskRef, n: number): void {
  const run = (operation: string, input: JsonValue): JsonObject => facadeCall(side, grant, operation, input);
  const claimed = claimedOf(run('claim', claimRequest(grant.actor, task, `c-${n}`, `op-${n}`)));
  run('heartbeat', mutationRequest(grant.actor, claimed, 'heartbeat', `h-${n}`));
  run('result', assertionRequest(grant.actor, claimed, `r-${n}`, 'failed'));
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}
