/**
 * Recovery envelopes (docs/agent-tasks.md "Status and recovery") for every observed state — pending, leased, expired,
 * finished, replaced, cancelled, unknown — for a request that committed and one that did not.
 * Every envelope is checked by the contract's own rules (checkRecoveryEnvelope) and its
 * disposition and permitted actions are asserted.
 */
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';

import { formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { taskRecoveryEnvelopeDecoder } from '../../src/contracts/task/recovery.js';
import { tempDir } from '../helpers/tmp.js';
import {
  assertionRequest,
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  recoveryRequest,
  taskRef,
  type Claimed,
} from '../support/task-requests.js';
import { context, FakeClock, makeTaskStore } from '../support/tasks.js';

const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'a1' };

function setup(t: TestContext) {
  const store = makeTaskStore(tempDir(t));
  const clock = new FakeClock();
  const ctx = context(store, ALICE, clock);
  const requirements = call(ctx, 'requirements');
  return { ctx, clock, lint: taskRef(requirements, 'lint') };
}

function envelope(ctx: Parameters<typeof call>[0], kind: string, request: JsonObject): JsonObject {
  const answer = call(ctx, 'recovery', recoveryRequest(kind, request));
  // The envelope satisfies every rule of the contract (disposition and actions derived, facts consistent).
  taskRecoveryEnvelopeDecoder.decode(Buffer.from(formatJson(answer)));
  return answer;
}

function summary(e: JsonObject) {
  return {
    disposition: e.disposition,
    observed_state: e.observed_state,
    confirmed: e.confirmed_effects,
    unresolved: e.unresolved_effects,
    actions: e.permitted_actions,
  };
}

type State = 'leased' | 'expired' | 'finished' | 'cancelled' | 'replaced';

/** Drive a fresh claim of lint into `state`; returns the claim request and the attempt. */
function drive(
  ctx: Parameters<typeof call>[0],
  clock: FakeClock,
  lint: ReturnType<typeof taskRef>,
  state: State,
): { claim: JsonObject; claimed: Claimed } {
  const claim = claimRequest(ALICE, lint, 'claim-1', 'op-1', { leaseMs: 1000n });
  const claimed = claimedOf(call(ctx, 'claim', claim));
  if (state === 'expired') clock.advance(1000);
  if (state === 'finished') call(ctx, 'result', assertionRequest(ALICE, claimed, 'res-1'));
  if (state === 'cancelled' || state === 'replaced')
    call(ctx, 'cancel', mutationRequest(ALICE, claimed, 'cancel', 'cancel-1'));
  if (state === 'replaced') call(ctx, 'reconcile', mutationRequest(ALICE, claimed, 'reconcile', 'rec-1'));
  return { claim, claimed };
}

const COMMITTED_CLAIM: Record<State, ReturnType<typeof summary>> = {
  leased: {
    disposition: 'confirmed',
    observed_state: 'leased',
    confirmed: ['attempt_claimed'],
    unresolved: [],
    actions: ['inspect', 'stop'],
  },
  finished: {
    disposition: 'confirmed',
    observed_state: 'finished',
    confirmed: ['attempt_claimed'],
    unresolved: [],
    actions: ['inspect', 'stop'],
  },
  expired: {
    disposition: 'uncertain_effect',
    observed_state: 'expired',
    confirmed: ['attempt_claimed'],
    unresolved: ['execution_may_still_run'],
    actions: ['inspect', 'stop', 'reconcile'],
  },
  cancelled: {
    disposition: 'uncertain_effect',
    observed_state: 'cancelled',
    confirmed: ['attempt_claimed'],
    unresolved: ['execution_may_still_run'],
    actions: ['inspect', 'stop', 'reconcile'],
  },
  replaced: {
    disposition: 'uncertain_effect',
    observed_state: 'replaced',
    confirmed: ['attempt_claimed'],
    unresolved: ['execution_may_still_run'],
    actions: ['inspect', 'stop', 'reconcile', 'prepare_fresh_attempt'],
  },
};

for (const state of Object.keys(COMMITTED_CLAIM) as State[]) {
  test(`a committed claim whose attempt is ${state}`, (t) => {
    const { ctx, clock, lint } = setup(t);
    const { claim, claimed } = drive(ctx, clock, lint, state);
    const e = envelope(ctx, 'claim', claim);
    assert.deepEqual(summary(e), COMMITTED_CLAIM[state]);
    assert.equal(e.attempt_id, claimed.attempt_id);
    assert.equal(e.attempt_digest, claimed.attempt_digest);
    assert.equal(e.execution_operation_id, 'op-1');
    if (state === 'replaced') assert.deepEqual(e.supersession, { old_fence: 1n, new_fence: 2n });
    else assert.equal(e.supersession, null);
  });

  test(`a heartbeat that never committed, attempt ${state}: conclusive rejection without retry`, (t) => {
    const { ctx, clock, lint } = setup(t);
    const { claimed } = drive(ctx, clock, lint, state);
    const e = envelope(ctx, 'heartbeat', mutationRequest(ALICE, claimed, 'heartbeat', 'never-sent'));
    assert.equal(e.disposition, 'conclusive_rejection');
    assert.equal(e.observed_state, state);
    assert.deepEqual(e.confirmed_effects, []);
    assert.deepEqual(e.permitted_actions, ['inspect', 'stop']);
  });
}

test('pending: a claim that never committed may be retried identically, and only then', (t) => {
  const { ctx, lint } = setup(t);
  const claim = claimRequest(ALICE, lint, 'claim-1', 'op-1');
  const e = envelope(ctx, 'claim', claim);
  assert.deepEqual(summary(e), {
    disposition: 'conclusive_rejection',
    observed_state: 'pending',
    confirmed: [],
    unresolved: [],
    actions: ['inspect', 'stop', 'retry_identical'],
  });
  // The identical retry is then issued exactly the attempt the envelope named.
  const claimed = claimedOf(call(ctx, 'claim', claim));
  assert.equal(claimed.attempt_id, e.attempt_id);
  assert.equal(claimed.attempt_digest, e.attempt_digest);
});

test('unknown: a mutation naming an attempt the journal does not have', (t) => {
  const { ctx, lint } = setup(t);
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'claim-1', 'op-1')));
  const e = envelope(ctx, 'cancel', mutationRequest(ALICE, claimed, 'cancel', 'c-9', { attempt_id: 'a-missing' }));
  assert.deepEqual(summary(e), {
    disposition: 'conclusive_rejection',
    observed_state: 'unknown',
    confirmed: [],
    unresolved: [],
    actions: ['inspect', 'stop'],
  });
});

test('committed cancel, reconcile and result report their own confirmed effects', (t) => {
  const { ctx, lint } = setup(t);
  const claimed = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'claim-1', 'op-1')));
  const cancel = mutationRequest(ALICE, claimed, 'cancel', 'cancel-1');
  call(ctx, 'cancel', cancel);
  assert.deepEqual(summary(envelope(ctx, 'cancel', cancel)), {
    disposition: 'uncertain_effect',
    observed_state: 'cancelled',
    confirmed: ['attempt_cancelled'],
    unresolved: ['execution_may_still_run'],
    actions: ['inspect', 'stop', 'reconcile'],
  });
  const reconcile = mutationRequest(ALICE, claimed, 'reconcile', 'rec-1');
  call(ctx, 'reconcile', reconcile);
  const r = envelope(ctx, 'reconcile', reconcile);
  assert.deepEqual(summary(r), {
    disposition: 'uncertain_effect',
    observed_state: 'replaced',
    confirmed: ['attempt_superseded'],
    unresolved: ['execution_may_still_run'],
    actions: ['inspect', 'stop', 'reconcile', 'prepare_fresh_attempt'],
  });
  const fresh = claimedOf(call(ctx, 'claim', claimRequest(ALICE, lint, 'claim-2', 'op-2')));
  const result = assertionRequest(ALICE, fresh, 'res-1');
  call(ctx, 'result', result);
  assert.deepEqual(summary(envelope(ctx, 'result', result)), {
    disposition: 'confirmed',
    observed_state: 'finished',
    confirmed: ['assertion_retained'],
    unresolved: [],
    actions: ['inspect', 'stop'],
  });
  // Changed bytes under a committed id are a conflict, not an envelope; a kind that does not fit the request is refused.
  assert.throws(
    () =>
      call(
        ctx,
        'recovery',
        recoveryRequest('result', {
          ...result,
          outcome: 'uncertain',
          criteria: [{ criterion: 'command', outcome: 'uncertain', findings: [], evidence_digests: [] }],
        }),
      ),
    { code: 'TASK_REQUEST_CONFLICT' },
  );
  assert.throws(() => call(ctx, 'recovery', recoveryRequest('heartbeat', cancel)), { code: 'TASK_BINDING_MISMATCH' });
  assert.throws(() => call(ctx, 'recovery', recoveryRequest('claim', cancel)), { code: 'TASK_BINDING_MISMATCH' });
});
