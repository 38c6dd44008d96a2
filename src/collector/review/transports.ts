/**
 * The review transports other than Claude Code's (docs/review.md "Transports", "Replay
 * (validation only)" and "What is and is not qualified"; the Claude Code transport is
 * claude-code-transport.ts):
 * - the fixture transport answers canned responses, for tests only; `isQualifiedTransport` is
 *   false for it, so installation, import and native admission refuse it;
 * - the replay transport answers from a recorded trace, for the validation-only replay of an
 *   import, and refuses any request that differs from the recorded one.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { ReviewCallObservation, ReviewCallRecord } from '../../contracts/review/record.js';
import { validateTransportIdentity, type ReviewTransportIdentity } from '../../contracts/review/request.js';
import { sha256Hex } from '../../crypto/sha256.js';
import type { ReviewDispatch, ReviewTransport } from './controller.js';

const FIXTURE = Symbol('agentscm.review.fixture-transport');

/** One canned answer of the fixture transport: a response text, or a non-answer observation. */
export type FixtureAnswer =
  | { readonly response: string; readonly elapsedMs?: number }
  | { readonly status: Exclude<ReviewCallObservation['status'], 'answered'>; readonly elapsedMs?: number };

export interface FixtureTransport extends ReviewTransport {
  readonly [FIXTURE]: true;
  /** The dispatches made so far. */
  readonly dispatched: ReviewDispatch[];
}

/** A transport of canned answers, FOR TESTS ONLY: its basis is `fixture`, which never qualifies. */
export function createFixtureTransport(answers: readonly FixtureAnswer[], model = 'fixture-model'): FixtureTransport {
  const identity = validateTransportIdentity({
    basis: 'fixture',
    executable_sha256: null,
    provider_scope: 'fixture',
    model,
  });
  const dispatched: ReviewDispatch[] = [];
  return {
    [FIXTURE]: true,
    identity,
    dispatched,
    dispatch(call: ReviewDispatch): Promise<ReviewCallObservation> {
      dispatched.push(call);
      const answer = answers[call.callIndex] ?? { status: 'failed' as const };
      const base = {
        exit_code: null,
        elapsed_ms: answer.elapsedMs ?? 1,
        executable_before: null,
        executable_after: null,
      } as const;
      if ('response' in answer) {
        const bytes = Buffer.from(answer.response, 'utf8');
        if (bytes.length > call.maxResponseBytes)
          return Promise.resolve({
            ...base,
            status: 'output_limit',
            response: null,
            response_sha256: null,
            response_bytes: 0,
            detail: 'canned answer past the output budget',
          });
        return Promise.resolve({
          ...base,
          status: 'answered',
          response: answer.response,
          response_sha256: sha256Hex(bytes),
          response_bytes: bytes.length,
          detail: null,
        });
      }
      return Promise.resolve({
        ...base,
        status: answer.status,
        response: null,
        response_sha256: null,
        response_bytes: 0,
        detail: `canned ${answer.status}`,
      });
    },
  };
}

/** Whether a transport object is the test fixture. */
export function isFixtureTransport(transport: ReviewTransport): boolean {
  return (transport as Partial<FixtureTransport>)[FIXTURE] === true;
}

/** Whether an identity can qualify: only claude-code with a pinned executable digest (docs/review.md). */
export function isQualifiedTransport(identity: ReviewTransportIdentity): boolean {
  return identity.basis === 'claude-code' && identity.executable_sha256 !== null;
}

/** Refuse an identity that cannot qualify (REVIEW_TRANSPORT_NOT_QUALIFIED): for installation, import and admission. */
export function assertQualifiedTransport(identity: ReviewTransportIdentity): void {
  if (isQualifiedTransport(identity)) return;
  throw new AgentscmError(
    'REVIEW_TRANSPORT_NOT_QUALIFIED',
    `a review transport of basis ${identity.basis} cannot qualify`,
    {
      hint:
        'only the claude-code transport with a pinned executable digest qualifies; the fixture transport is ' +
        'for tests',
      details: { basis: identity.basis },
    },
  );
}

/** One recorded call: the transferred request bytes and the record's call row. */
export interface RecordedCall {
  readonly request: Buffer;
  readonly call: ReviewCallRecord;
}

export interface ReplayTransport extends ReviewTransport {
  /** Recorded calls the controller did not make. */
  readonly unconsumed: () => number;
}

function replayRefusal(
  code: 'REVIEW_REPLAY_REQUEST_MISMATCH' | 'REVIEW_REPLAY_TRACE_MISMATCH',
  callIndex: number,
  why: string,
): AgentscmError {
  return new AgentscmError(code, `replay of call ${callIndex}: ${why}`, {
    hint: 'the review record does not replay: refuse it; a collector re-collects a fresh attempt',
    details: { call_index: callIndex },
  });
}

/**
 * The validation-only replay transport: answers call i with the recorded observation of call i,
 * after checking that the request the controller derived is byte-identical to the recorded
 * request and has the record's request digest and ticket.
 */
export function createReplayTransport(
  identity: ReviewTransportIdentity,
  recorded: readonly RecordedCall[],
): ReplayTransport {
  let next = 0;
  return {
    identity,
    unconsumed: () => recorded.length - next,
    dispatch(call: ReviewDispatch): Promise<ReviewCallObservation> {
      const entry = recorded[call.callIndex];
      if (call.callIndex !== next || entry === undefined)
        return Promise.reject(
          replayRefusal(
            'REVIEW_REPLAY_TRACE_MISMATCH',
            call.callIndex,
            `the record holds ${recorded.length} call(s); the controller makes more`,
          ),
        );
      if (!entry.request.equals(call.request))
        return Promise.reject(
          replayRefusal(
            'REVIEW_REPLAY_REQUEST_MISMATCH',
            call.callIndex,
            'the derived request differs from the recorded request',
          ),
        );
      if (
        entry.call.call_index !== call.callIndex ||
        entry.call.request_digest !== call.requestDigest ||
        entry.call.ticket !== call.ticket
      ) {
        return Promise.reject(
          replayRefusal(
            'REVIEW_REPLAY_TRACE_MISMATCH',
            call.callIndex,
            'the record names another call index, request digest or ticket',
          ),
        );
      }
      next += 1;
      return Promise.resolve(entry.call.observation);
    },
  };
}
