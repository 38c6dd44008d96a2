/**
 * Recovery rules (docs/agent-tasks.md "Status and recovery"), exhaustively: every observed state ×
 * every set of unresolved effects × representative confirmed effects × supersession shapes, checked
 * against the rules restated directly from the spec, plus named cases for each disposition in each
 * state.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import {
  buildRecoveryEnvelope,
  classifyRecovery,
  mayRetryIdentical,
  OBSERVED_STATES,
  permittedActions,
  recoveryEnvelopeToJson,
  taskRecoveryEnvelopeDecoder,
  UNRESOLVED_EFFECTS,
  type ConfirmedEffect,
  type FenceSupersession,
  type ObservedState,
  type RecoveryAction,
  type RecoveryFacts,
  type UnresolvedEffect,
} from '../../src/contracts/task/recovery.js';
import { codeOf } from '../helpers/errors.js';
import { hex64 } from '../support/task-contracts.js';

const FENCE = 5n;
const identity = {
  request_id: 'req-1',
  request_kind: 'heartbeat' as const,
  task_id: 'task-1',
  task_digest: hex64('1'),
  attempt_id: 'attempt-1',
  attempt_digest: hex64('2'),
  execution_operation_id: 'op-1',
};

function subsets<T>(items: readonly T[]): T[][] {
  return items.reduce<T[][]>((acc, item) => acc.concat(acc.map((s) => [...s, item])), [[]]);
}

const CONFIRMED_SETS: ConfirmedEffect[][] = [
  [],
  ['attempt_claimed'],
  ['lease_renewed'],
  ['assertion_retained'],
  ['attempt_superseded'],
  ['attempt_cancelled', 'lease_renewed'],
];
const SUPERSESSIONS: (FenceSupersession | null)[] = [
  null,
  { old_fence: FENCE, new_fence: FENCE + 1n },
  { old_fence: FENCE, new_fence: FENCE },
  { old_fence: FENCE, new_fence: FENCE - 1n },
  { old_fence: FENCE - 1n, new_fence: FENCE + 1n },
];

/** The spec's rules, restated independently of the implementation. */
function oracle(
  facts: RecoveryFacts,
): { valid: false } | { valid: true; disposition: string; actions: RecoveryAction[] } {
  const s = facts.supersession;
  if (
    s !== null &&
    (facts.observed_state !== 'replaced' || s.old_fence !== facts.fence || !(s.new_fence > s.old_fence))
  )
    return { valid: false };
  if (facts.confirmed_effects.includes('assertion_retained') && facts.observed_state !== 'finished')
    return { valid: false };
  if (facts.confirmed_effects.includes('attempt_superseded') && s === null) return { valid: false };
  if (facts.unresolved_effects.length > 0) {
    const fresh =
      facts.observed_state === 'replaced' &&
      s !== null &&
      facts.unresolved_effects.length === 1 &&
      facts.unresolved_effects[0] === 'execution_may_still_run';
    return {
      valid: true,
      disposition: 'uncertain_effect',
      actions: fresh ? ['inspect', 'stop', 'reconcile', 'prepare_fresh_attempt'] : ['inspect', 'stop', 'reconcile'],
    };
  }
  if (facts.confirmed_effects.length > 0)
    return { valid: true, disposition: 'confirmed', actions: ['inspect', 'stop'] };
  return {
    valid: true,
    disposition: 'conclusive_rejection',
    actions: facts.observed_state === 'pending' ? ['inspect', 'stop', 'retry_identical'] : ['inspect', 'stop'],
  };
}

test('exhaustive: every state × unresolved set × confirmed set × supersession follows the spec', () => {
  let checked = 0;
  let fresh = 0;
  for (const state of OBSERVED_STATES) {
    for (const unresolved of subsets(UNRESOLVED_EFFECTS)) {
      for (const confirmed of CONFIRMED_SETS) {
        for (const supersession of SUPERSESSIONS) {
          const facts: RecoveryFacts = {
            observed_state: state,
            confirmed_effects: confirmed,
            unresolved_effects: unresolved,
            supersession,
            fence: FENCE,
          };
          const expected = oracle(facts);
          const label = JSON.stringify({
            state,
            unresolved,
            confirmed,
            supersession: supersession && [String(supersession.old_fence), String(supersession.new_fence)],
          });
          if (!expected.valid) {
            assert.equal(
              codeOf(() => permittedActions(facts)),
              'RECOVERY_ENVELOPE_INVALID',
              label,
            );
            continue;
          }
          const envelope = buildRecoveryEnvelope(identity, facts);
          assert.equal(envelope.disposition, expected.disposition, label);
          assert.deepEqual(envelope.permitted_actions, expected.actions, label);
          if (expected.disposition === 'uncertain_effect' || state !== 'pending')
            assert.equal(mayRetryIdentical(envelope), false, label);
          if (envelope.permitted_actions.includes('prepare_fresh_attempt')) fresh++;
          // The envelope survives the strict decoder (which re-derives everything).
          assert.deepEqual(
            taskRecoveryEnvelopeDecoder.decode(encodeCanonical(recoveryEnvelopeToJson(envelope))),
            envelope,
            label,
          );
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 500, `checked ${checked}`);
  assert.ok(fresh > 0);
});

const STATES_OF_ISSUE: ObservedState[] = ['finished', 'replaced', 'cancelled', 'leased', 'expired', 'unknown'];

test('conclusive rejection: inspect/stop in every state; identical retry only while pending', () => {
  for (const state of STATES_OF_ISSUE) {
    const envelope = buildRecoveryEnvelope(identity, {
      observed_state: state,
      confirmed_effects: [],
      unresolved_effects: [],
      supersession: null,
      fence: FENCE,
    });
    assert.equal(envelope.disposition, 'conclusive_rejection');
    assert.deepEqual(envelope.permitted_actions, ['inspect', 'stop'], state);
  }
  const pending = buildRecoveryEnvelope(identity, {
    observed_state: 'pending',
    confirmed_effects: [],
    unresolved_effects: [],
    supersession: null,
    fence: FENCE,
  });
  assert.deepEqual(pending.permitted_actions, ['inspect', 'stop', 'retry_identical']);
});

test('confirmed: only inspect/stop in every state; a retained assertion only for a finished attempt', () => {
  for (const state of STATES_OF_ISSUE) {
    const envelope = buildRecoveryEnvelope(identity, {
      observed_state: state,
      confirmed_effects: ['attempt_claimed'],
      unresolved_effects: [],
      supersession: null,
      fence: FENCE,
    });
    assert.equal(envelope.disposition, 'confirmed');
    assert.deepEqual(envelope.permitted_actions, ['inspect', 'stop']);
    const retained = () =>
      buildRecoveryEnvelope(identity, {
        observed_state: state,
        confirmed_effects: ['assertion_retained'],
        unresolved_effects: [],
        supersession: null,
        fence: FENCE,
      });
    assert.equal(codeOf(retained), state === 'finished' ? 'ok' : 'RECOVERY_ENVELOPE_INVALID', state);
  }
});

test('uncertain effect: never an identical retry; fresh attempt only for replaced + supersession + only execution_may_still_run', () => {
  const superseded = { old_fence: FENCE, new_fence: FENCE + 3n };
  for (const state of STATES_OF_ISSUE) {
    for (const unresolved of [
      ['execution_may_still_run'],
      ['result_acceptance_unknown'],
      ['resource_custody_unknown'],
      ['execution_may_still_run', 'result_acceptance_unknown'],
    ] as UnresolvedEffect[][]) {
      const envelope = buildRecoveryEnvelope(identity, {
        observed_state: state,
        confirmed_effects: [],
        unresolved_effects: unresolved,
        supersession: state === 'replaced' ? superseded : null,
        fence: FENCE,
      });
      assert.equal(envelope.disposition, 'uncertain_effect');
      assert.equal(mayRetryIdentical(envelope), false);
      const fresh = state === 'replaced' && unresolved.length === 1 && unresolved[0] === 'execution_may_still_run';
      assert.equal(
        envelope.permitted_actions.includes('prepare_fresh_attempt'),
        fresh,
        `${state} ${unresolved.join('+')}`,
      );
    }
  }
  // Replaced without a recorded supersession: no fresh attempt.
  const unrecorded = buildRecoveryEnvelope(identity, {
    observed_state: 'replaced',
    confirmed_effects: [],
    unresolved_effects: ['execution_may_still_run'],
    supersession: null,
    fence: FENCE,
  });
  assert.deepEqual(unrecorded.permitted_actions, ['inspect', 'stop', 'reconcile']);
});

test('expiry never implies supersession; supersession must be monotonic and name the old fence', () => {
  const facts = (state: ObservedState, supersession: FenceSupersession): RecoveryFacts => ({
    observed_state: state,
    confirmed_effects: [],
    unresolved_effects: ['execution_may_still_run'],
    supersession,
    fence: FENCE,
  });
  assert.equal(
    codeOf(() => permittedActions(facts('expired', { old_fence: FENCE, new_fence: FENCE + 1n }))),
    'RECOVERY_ENVELOPE_INVALID',
  );
  assert.equal(
    codeOf(() => permittedActions(facts('replaced', { old_fence: FENCE, new_fence: FENCE }))),
    'RECOVERY_ENVELOPE_INVALID',
  );
  assert.equal(
    codeOf(() => permittedActions(facts('replaced', { old_fence: FENCE + 1n, new_fence: FENCE + 2n }))),
    'RECOVERY_ENVELOPE_INVALID',
  );
});

test('the decoder refuses a disposition or action list that the facts do not give', () => {
  const envelope = buildRecoveryEnvelope(identity, {
    observed_state: 'leased',
    confirmed_effects: [],
    unresolved_effects: ['execution_may_still_run'],
    supersession: null,
    fence: FENCE,
  });
  const json = recoveryEnvelopeToJson(envelope);
  assert.equal(
    codeOf(() => taskRecoveryEnvelopeDecoder.decode(encodeCanonical({ ...json, disposition: 'conclusive_rejection' }))),
    'RECOVERY_ENVELOPE_INVALID',
  );
  assert.equal(
    codeOf(() =>
      taskRecoveryEnvelopeDecoder.decode(
        encodeCanonical({ ...json, permitted_actions: ['inspect', 'stop', 'reconcile', 'retry_identical'] }),
      ),
    ),
    'RECOVERY_ENVELOPE_INVALID',
  );
  assert.equal(
    codeOf(() =>
      taskRecoveryEnvelopeDecoder.decode(encodeCanonical({ ...json, permitted_actions: ['inspect', 'stop'] })),
    ),
    'RECOVERY_ENVELOPE_INVALID',
  );
  assert.equal(
    codeOf(() => taskRecoveryEnvelopeDecoder.decode(encodeCanonical({ ...json, command: 'rm -rf /' }))),
    'SCHEMA_UNKNOWN_FIELD',
  );
  assert.equal(
    classifyRecovery({ confirmed_effects: ['lease_renewed'], unresolved_effects: ['execution_may_still_run'] }),
    'uncertain_effect',
  );
});
