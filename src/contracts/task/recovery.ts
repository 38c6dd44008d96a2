/**
 * TaskRecoveryEnvelope (docs/agent-tasks.md "Status and recovery"): binds the request and immutable execution
 * identities, the exact task and attempt digests and the old fence, and reports one of three dispositions —
 * confirmed, conclusive_rejection, uncertain_effect — with the observed attempt state, typed
 * effects, an explicit fence supersession and the actions that remain permitted. It carries no
 * executable command, credential or filesystem path. The rules are pure functions here; the
 * state machine produces envelopes with buildRecoveryEnvelope.
 */
import { AgentscmError } from '../errors.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import {
  checkUnique,
  defineTaskDecoder,
  HEX64_SCHEMA,
  ID_SCHEMA,
  POSITIVE_U64_SCHEMA,
  VERSION_SCHEMA,
  type TaskDecoder,
} from './common.js';

export type RecoveryDisposition = 'confirmed' | 'conclusive_rejection' | 'uncertain_effect';
export const RECOVERY_DISPOSITIONS: readonly RecoveryDisposition[] = [
  'confirmed',
  'conclusive_rejection',
  'uncertain_effect',
];

/** What is known of the existing attempt, independently of the request being recovered. */
export type ObservedState = 'pending' | 'leased' | 'expired' | 'finished' | 'replaced' | 'cancelled' | 'unknown';
export const OBSERVED_STATES: readonly ObservedState[] = [
  'pending',
  'leased',
  'expired',
  'finished',
  'replaced',
  'cancelled',
  'unknown',
];

/** The request kinds whose outcome a recovery read describes. */
export type RecoveryRequestKind = 'claim' | 'heartbeat' | 'cancel' | 'reconcile' | 'result';
export const RECOVERY_REQUEST_KINDS: readonly RecoveryRequestKind[] = [
  'claim',
  'heartbeat',
  'cancel',
  'reconcile',
  'result',
];

/** Effects the journal confirms happened. */
export type ConfirmedEffect =
  'attempt_claimed' | 'lease_renewed' | 'attempt_cancelled' | 'attempt_superseded' | 'assertion_retained';
export const CONFIRMED_EFFECTS: readonly ConfirmedEffect[] = [
  'attempt_claimed',
  'lease_renewed',
  'attempt_cancelled',
  'attempt_superseded',
  'assertion_retained',
];

/** Effects that may or may not have happened; each blocks until inspected or reconciled. */
export type UnresolvedEffect =
  'execution_may_still_run' | 'result_acceptance_unknown' | 'resource_custody_unknown' | 'external_effect_unknown';
export const UNRESOLVED_EFFECTS: readonly UnresolvedEffect[] = [
  'execution_may_still_run',
  'result_acceptance_unknown',
  'resource_custody_unknown',
  'external_effect_unknown',
];

/** Actions a recovery may permit, in this fixed order. */
export type RecoveryAction = 'inspect' | 'stop' | 'reconcile' | 'retry_identical' | 'prepare_fresh_attempt';
export const RECOVERY_ACTIONS: readonly RecoveryAction[] = [
  'inspect',
  'stop',
  'reconcile',
  'retry_identical',
  'prepare_fresh_attempt',
];

/** An explicit, confirmed supersession: the old fence and a strictly greater new one. */
export interface FenceSupersession {
  readonly old_fence: bigint;
  readonly new_fence: bigint;
}

export interface TaskRecoveryEnvelope extends RecoveryIdentity {
  readonly version: 1;
  /** The fence of the attempt the request was bound to. */
  readonly fence: bigint;
  readonly disposition: RecoveryDisposition;
  readonly observed_state: ObservedState;
  readonly confirmed_effects: readonly ConfirmedEffect[];
  readonly unresolved_effects: readonly UnresolvedEffect[];
  readonly supersession: FenceSupersession | null;
  readonly permitted_actions: readonly RecoveryAction[];
}

const enumList = (values: readonly string[]) =>
  ({ type: 'array', maxItems: values.length, items: { enum: [...values] } }) as const;

export const RECOVERY_ENVELOPE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'request_id',
    'request_kind',
    'task_id',
    'task_digest',
    'attempt_id',
    'attempt_digest',
    'execution_operation_id',
    'fence',
    'disposition',
    'observed_state',
    'confirmed_effects',
    'unresolved_effects',
    'supersession',
    'permitted_actions',
  ],
  properties: {
    version: VERSION_SCHEMA,
    request_id: ID_SCHEMA,
    request_kind: { enum: [...RECOVERY_REQUEST_KINDS] },
    task_id: ID_SCHEMA,
    task_digest: HEX64_SCHEMA,
    attempt_id: ID_SCHEMA,
    attempt_digest: HEX64_SCHEMA,
    execution_operation_id: ID_SCHEMA,
    fence: POSITIVE_U64_SCHEMA,
    disposition: { enum: [...RECOVERY_DISPOSITIONS] },
    observed_state: { enum: [...OBSERVED_STATES] },
    confirmed_effects: enumList(CONFIRMED_EFFECTS),
    unresolved_effects: enumList(UNRESOLVED_EFFECTS),
    supersession: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          additionalProperties: false,
          required: ['old_fence', 'new_fence'],
          properties: { old_fence: POSITIVE_U64_SCHEMA, new_fence: POSITIVE_U64_SCHEMA },
        },
      ],
    },
    permitted_actions: enumList(RECOVERY_ACTIONS),
  },
} as const;

/** The facts a disposition and the permitted actions are derived from. */
export interface RecoveryFacts {
  readonly observed_state: ObservedState;
  readonly confirmed_effects: readonly ConfirmedEffect[];
  readonly unresolved_effects: readonly UnresolvedEffect[];
  readonly supersession: FenceSupersession | null;
  /** The fence the request was bound to (the supersession's old fence). */
  readonly fence: bigint;
}

function invalid(message: string): never {
  throw new AgentscmError('RECOVERY_ENVELOPE_INVALID', message);
}

/**
 * Check the facts alone (docs/agent-tasks.md "Status and recovery"): a supersession records the envelope's fence as
 * old and a strictly greater new fence, and only a replaced attempt has one (expiry never implies
 * supersession); a retained assertion is confirmed only for a finished attempt.
 */
export function checkRecoveryFacts(facts: RecoveryFacts): void {
  checkUnique(facts.confirmed_effects, '/confirmed_effects');
  checkUnique(facts.unresolved_effects, '/unresolved_effects');
  const s = facts.supersession;
  if (s !== null) {
    if (facts.observed_state !== 'replaced')
      invalid(`a fence supersession is recorded only for a replaced attempt, not ${facts.observed_state}`);
    if (s.old_fence !== facts.fence)
      invalid(`the supersession's old fence ${s.old_fence} is not the envelope fence ${facts.fence}`);
    if (s.new_fence <= s.old_fence)
      invalid(`the supersession's new fence ${s.new_fence} is not greater than the old fence ${s.old_fence}`);
  }
  if (facts.confirmed_effects.includes('attempt_superseded') && s === null)
    invalid('attempt_superseded needs the explicit fence supersession');
  if (facts.confirmed_effects.includes('assertion_retained') && facts.observed_state !== 'finished') {
    invalid(`a confirmed retained assertion requires a finished attempt, not ${facts.observed_state}`);
  }
}

/**
 * The disposition (docs/agent-tasks.md "Status and recovery"): any unresolved effect → uncertain_effect; otherwise any
 * confirmed effect → confirmed; otherwise conclusive_rejection (the request had no effect).
 */
export function classifyRecovery(
  facts: Pick<RecoveryFacts, 'confirmed_effects' | 'unresolved_effects'>,
): RecoveryDisposition {
  if (facts.unresolved_effects.length > 0) return 'uncertain_effect';
  if (facts.confirmed_effects.length > 0) return 'confirmed';
  return 'conclusive_rejection';
}

/**
 * The permitted actions (docs/agent-tasks.md "Status and recovery"), in RECOVERY_ACTIONS order:
 * - confirmed: inspect, stop only;
 * - conclusive_rejection: inspect, stop in every observed state; retry_identical only for pending;
 * - uncertain_effect: inspect, stop, reconcile, never retry_identical; prepare_fresh_attempt only for
 *   replaced + confirmed monotonic supersession + the only unresolved effect execution_may_still_run.
 */
export function permittedActions(facts: RecoveryFacts): RecoveryAction[] {
  checkRecoveryFacts(facts);
  const disposition = classifyRecovery(facts);
  switch (disposition) {
    case 'confirmed':
      return ['inspect', 'stop'];
    case 'conclusive_rejection':
      return facts.observed_state === 'pending' ? ['inspect', 'stop', 'retry_identical'] : ['inspect', 'stop'];
    case 'uncertain_effect': {
      const s = facts.supersession;
      const onlyMayStillRun =
        facts.unresolved_effects.length === 1 && facts.unresolved_effects[0] === 'execution_may_still_run';
      const fresh = facts.observed_state === 'replaced' && s !== null && s.new_fence > s.old_fence && onlyMayStillRun;
      return fresh ? ['inspect', 'stop', 'reconcile', 'prepare_fresh_attempt'] : ['inspect', 'stop', 'reconcile'];
    }
  }
}

/** The identities an envelope binds. */
export interface RecoveryIdentity {
  readonly request_id: string;
  readonly request_kind: RecoveryRequestKind;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
}

/** Build an envelope whose disposition and actions follow from the facts (for the state machine). */
export function buildRecoveryEnvelope(identity: RecoveryIdentity, facts: RecoveryFacts): TaskRecoveryEnvelope {
  const actions = permittedActions(facts);
  const order = (values: readonly string[], all: readonly string[]) => all.filter((v) => values.includes(v));
  return {
    version: 1,
    ...identity,
    fence: facts.fence,
    disposition: classifyRecovery(facts),
    observed_state: facts.observed_state,
    confirmed_effects: order(facts.confirmed_effects, CONFIRMED_EFFECTS) as ConfirmedEffect[],
    unresolved_effects: order(facts.unresolved_effects, UNRESOLVED_EFFECTS) as UnresolvedEffect[],
    supersession:
      facts.supersession === null
        ? null
        : { old_fence: facts.supersession.old_fence, new_fence: facts.supersession.new_fence },
    permitted_actions: actions,
  };
}

/** Check a whole envelope: its facts, and that disposition and actions are exactly the derived ones. */
export function checkRecoveryEnvelope(envelope: TaskRecoveryEnvelope): void {
  const expected = classifyRecovery(envelope);
  if (envelope.disposition !== expected)
    invalid(`disposition ${envelope.disposition} does not fit the effects (expected ${expected})`);
  const actions = permittedActions(envelope);
  const same =
    actions.length === envelope.permitted_actions.length &&
    actions.every((action, i) => envelope.permitted_actions[i] === action);
  if (!same)
    invalid(`permitted_actions [${envelope.permitted_actions.join(', ')}] are not the derived [${actions.join(', ')}]`);
}

/** Whether an identical retry of the recovered request is permitted. */
export function mayRetryIdentical(envelope: TaskRecoveryEnvelope): boolean {
  return envelope.permitted_actions.includes('retry_identical');
}

/** Canonical (declared-order) JSON of an envelope. */
export function recoveryEnvelopeToJson(envelope: TaskRecoveryEnvelope): JsonObject {
  const supersession: JsonValue =
    envelope.supersession === null
      ? null
      : { old_fence: envelope.supersession.old_fence, new_fence: envelope.supersession.new_fence };
  return {
    version: envelope.version,
    request_id: envelope.request_id,
    request_kind: envelope.request_kind,
    task_id: envelope.task_id,
    task_digest: envelope.task_digest,
    attempt_id: envelope.attempt_id,
    attempt_digest: envelope.attempt_digest,
    execution_operation_id: envelope.execution_operation_id,
    fence: envelope.fence,
    disposition: envelope.disposition,
    observed_state: envelope.observed_state,
    confirmed_effects: [...envelope.confirmed_effects],
    unresolved_effects: [...envelope.unresolved_effects],
    supersession,
    permitted_actions: [...envelope.permitted_actions],
  };
}

/** Strict decoder of an envelope (schema, then every rule of docs/agent-tasks.md "Status and recovery"). */
export const taskRecoveryEnvelopeDecoder: TaskDecoder<TaskRecoveryEnvelope> = defineTaskDecoder<TaskRecoveryEnvelope>(
  'agent-task.recovery-envelope',
  RECOVERY_ENVELOPE_SCHEMA,
  {
    maxBytes: 16 * 1024,
    check: checkRecoveryEnvelope,
  },
);
