/**
 * The idempotency matrix (docs/agent-tasks.md "Idempotency": request identities are scoped
 * to the exact owner and agent; one request id cannot change bytes or cross kinds; an exact
 * committed retry returns the retained outcome): every kind × identical retry / changed bytes /
 * another actor, plus cross-kind reuse and retries after the subject moved on.
 */
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';

import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import type { TaskContext } from '../../src/tasks/context.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import {
  assertionRequest,
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  taskRef,
  type Claimed,
  type TaskRef,
} from '../support/task-requests.js';
import {
  addRevision,
  checkpoint,
  context,
  defaultFiles,
  FakeClock,
  makeTaskStore,
  type TaskStore,
} from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };
const ALICE2: AgentRef = { owner_id: 'alice', agent_id: 'a2' };
const BOB: AgentRef = { owner_id: 'bob', agent_id: 'a1' };

interface World {
  readonly store: TaskStore;
  readonly clock: FakeClock;
  readonly ctx: (actor: AgentRef) => TaskContext;
  readonly lint: TaskRef;
  readonly unit: TaskRef;
}

function world(t: TestContext): World {
  const store = makeTaskStore(tempDir(t));
  const clock = new FakeClock();
  const ctx = (actor: AgentRef) => context(store, actor, clock);
  const requirements = call(ctx(ALICE), 'requirements');
  return { store, clock, ctx, lint: taskRef(requirements, 'lint'), unit: taskRef(requirements, 'unit') };
}

function bytes(value: JsonObject): string {
  return Buffer.from(encodeCanonical(value)).toString('hex');
}

type Kind = 'claim' | 'heartbeat' | 'cancel' | 'reconcile' | 'result';

interface Case {
  /** Build the committed request of `actor` under `requestId` (after any setup it needs). */
  readonly request: (w: World, actor: AgentRef, requestId: string, claimed: Claimed | null) => JsonObject;
  /** The same request with one bound field changed. */
  readonly changed: (request: JsonObject) => JsonObject;
  readonly needsClaim: boolean;
}

const CASES: Record<Kind, Case> = {
  claim: {
    request: (w, actor, id) =>
      claimRequest(actor, actor === ALICE ? w.lint : w.unit, id, `op-${actor.owner_id}-${actor.agent_id}`),
    changed: (r) => ({ ...r, requested_lease_ms: 59_000n }),
    needsClaim: false,
  },
  heartbeat: {
    request: (_w, actor, id, claimed) => mutationRequest(actor, claimed as Claimed, 'heartbeat', id),
    changed: (r) => ({ ...r, fence: 7n }),
    needsClaim: true,
  },
  cancel: {
    request: (_w, actor, id, claimed) => mutationRequest(actor, claimed as Claimed, 'cancel', id),
    changed: (r) => ({ ...r, reason: 'another reason' }),
    needsClaim: true,
  },
  reconcile: {
    request: (_w, actor, id, claimed) => mutationRequest(actor, claimed as Claimed, 'reconcile', id),
    changed: (r) => ({ ...r, reason: 'another reason' }),
    needsClaim: true,
  },
  result: {
    request: (_w, actor, id, claimed) => assertionRequest(actor, claimed as Claimed, id, 'failed'),
    changed: (r) => ({
      ...r,
      outcome: 'uncertain',
      criteria: [{ criterion: 'command', outcome: 'uncertain', findings: [], evidence_digests: [] }],
    }),
    needsClaim: true,
  },
};

function claimFor(w: World, actor: AgentRef, task: TaskRef, tag: string): Claimed {
  return claimedOf(call(w.ctx(actor), 'claim', claimRequest(actor, task, `setup-${tag}`, `op-setup-${tag}`)));
}

for (const kind of Object.keys(CASES) as Kind[]) {
  const spec = CASES[kind];
  test(`${kind}: identical retry returns the retained bytes; changed bytes conflict; another actor's id is its own`, (t) => {
    const w = world(t);
    const claimed = spec.needsClaim ? claimFor(w, ALICE, w.lint, 'alice') : null;
    const request = spec.request(w, ALICE, 'req-1', claimed);
    const first = call(w.ctx(ALICE), kind, request);
    w.clock.advance(500);
    // Identical retry: the exact retained outcome, even though time moved on (no second renewal).
    const again = call(w.ctx(ALICE), kind, request);
    assert.equal(bytes(again), bytes(first));
    // Changed bytes under the same id: conflict, nothing changes.
    assert.equal(
      codeOf(() => call(w.ctx(ALICE), kind, spec.changed(request))),
      'TASK_REQUEST_CONFLICT',
    );
    assert.equal(bytes(call(w.ctx(ALICE), kind, request)), bytes(first));
    // Another kind under the same id: conflict.
    const otherKind: Kind = kind === 'heartbeat' ? 'cancel' : 'heartbeat';
    const crossClaim = claimed ?? claimedOf(first);
    const cross =
      otherKind === 'cancel'
        ? mutationRequest(ALICE, crossClaim, 'cancel', 'req-1')
        : mutationRequest(ALICE, crossClaim, 'heartbeat', 'req-1');
    assert.equal(
      codeOf(() => call(w.ctx(ALICE), otherKind, cross)),
      'TASK_REQUEST_CONFLICT',
    );
    // The same id by other actors (another agent of the same owner, another owner): independent.
    for (const [index, actor] of [ALICE2, BOB].entries()) {
      const task = actor === ALICE2 ? w.unit : w.lint;
      if (kind === 'claim' && actor === BOB) continue; // lint is Alice's; covered through ALICE2 on unit.
      const theirClaim = spec.needsClaim
        ? claimFor(w, actor, index === 0 ? w.unit : task, `${actor.owner_id}-${actor.agent_id}`)
        : null;
      if (spec.needsClaim && theirClaim === null) continue;
      const theirs = spec.request(w, actor, 'req-1', theirClaim);
      const answer = call(w.ctx(actor), kind, theirs);
      assert.notEqual(bytes(answer), bytes(first));
      assert.equal(bytes(call(w.ctx(actor), kind, theirs)), bytes(answer));
      if (spec.needsClaim) break; // one other actor per mutation kind is enough: the task has one current attempt.
    }
    // A request naming another actor than the authenticated one is refused outright.
    assert.equal(
      codeOf(() => call(w.ctx(BOB), kind, request)),
      'TASK_ACTOR_MISMATCH',
    );
  });
}

test('an exact committed retry returns its retained outcome after the subject moved on', (t) => {
  const w = world(t);
  const claim = claimRequest(ALICE, w.lint, 'c-1', 'op-1');
  const first = call(w.ctx(ALICE), 'claim', claim);
  const heartbeat = mutationRequest(ALICE, claimedOf(first), 'heartbeat', 'h-1');
  const renewed = call(w.ctx(ALICE), 'heartbeat', heartbeat);
  const next = addRevision(w.store.dataDir, w.store.repository, defaultFiles({ 'c.txt': 'gamma' }), w.store.revision);
  checkpoint(w.store, next);
  assert.equal(bytes(call(w.ctx(ALICE), 'claim', claim)), bytes(first));
  assert.equal(bytes(call(w.ctx(ALICE), 'heartbeat', heartbeat)), bytes(renewed));
  // A new heartbeat under a fresh id needs the current subject.
  assert.equal(
    codeOf(() => call(w.ctx(ALICE), 'heartbeat', mutationRequest(ALICE, claimedOf(first), 'heartbeat', 'h-2'))),
    'TASK_STALE',
  );
});
