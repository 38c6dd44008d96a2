/**
 * Validation-only replay of a review (docs/review.md "Replay": for a review, import rebuilds the
 * immutable sources and the installed request, then runs the existing finite controller against a
 * validation-only replay transport and journal; replay checks every prepared canonical
 * reservation/request, ticket, source exposure and retained observation and compares the complete
 * derived review record). The record is decoded strictly and must be in canonical form; every
 * retained response must have its recorded SHA-256 and length; the controller then runs over the
 * same sources, policy and action with the replay transport and an in-memory journal, every
 * recorded call must be made exactly once with a byte-identical request, and the derived record
 * must be byte-identical to the given one. Imported success flags alone never qualify.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import {
  decodeReviewRecord,
  reviewRecordToJson,
  type ReviewCallObservation,
  type ReviewRecord,
} from '../../contracts/review/record.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { runReview, type ReviewInput } from './controller.js';
import { openValidationJournal } from './journal.js';
import { type ReviewSources } from './sources.js';
import { createReplayTransport } from './transports.js';

export interface ReplayInput extends ReviewInput {
  readonly sources: ReviewSources;
  /** The transferred ReviewRequest bytes, one per call, in call order. */
  readonly requests: readonly Buffer[];
  /** The transferred ReviewRecord bytes. */
  readonly record: Buffer;
}

function refuse(
  code: 'REVIEW_REPLAY_RESPONSE_TAMPERED' | 'REVIEW_REPLAY_TRACE_MISMATCH' | 'REVIEW_REPLAY_RECORD_MISMATCH',
  message: string,
  details: Record<string, unknown> = {},
): AgentscmError {
  return new AgentscmError(code, message, {
    hint: 'the review record does not replay: refuse it; a collector re-collects a fresh attempt',
    details,
  });
}

function responseMatches(o: ReviewCallObservation): boolean {
  if (o.response === null) return o.response_sha256 === null && o.response_bytes === 0;
  const bytes = Buffer.from(o.response, 'utf8');
  return sha256Hex(bytes) === o.response_sha256 && bytes.length === o.response_bytes;
}

/** Replay a recorded review and return the (identical) derived record, or refuse it with its code. */
export async function replayReviewRecord(input: ReplayInput): Promise<ReviewRecord> {
  const record = decodeReviewRecord(input.record);
  if (!encodeCanonical(reviewRecordToJson(record)).equals(input.record))
    throw refuse('REVIEW_REPLAY_RECORD_MISMATCH', 'the review record is not in its canonical encoding');
  if (input.requests.length !== record.calls.length) {
    throw refuse(
      'REVIEW_REPLAY_TRACE_MISMATCH',
      `the transfer carries ${input.requests.length} request(s) for ${record.calls.length} recorded call(s)`,
    );
  }
  for (const call of record.calls) {
    if (!responseMatches(call.observation)) {
      throw refuse(
        'REVIEW_REPLAY_RESPONSE_TAMPERED',
        `the retained response of call ${call.call_index} does not have its recorded SHA-256 and length`,
        { call_index: call.call_index },
      );
    }
  }
  const transport = createReplayTransport(
    record.transport,
    record.calls.map((call, index) => ({ request: input.requests[index] ?? Buffer.alloc(0), call })),
  );
  const journal = openValidationJournal();
  let derived: ReviewRecord;
  try {
    derived = await runReview(
      { repository: input.repository, revision: input.revision, action: input.action, policyBytes: input.policyBytes },
      { sources: input.sources, transport, journal },
    );
  } finally {
    journal.close();
  }
  if (transport.unconsumed() > 0)
    throw refuse(
      'REVIEW_REPLAY_TRACE_MISMATCH',
      `the controller stopped before ${transport.unconsumed()} recorded call(s)`,
    );
  if (!encodeCanonical(reviewRecordToJson(derived)).equals(input.record)) {
    throw refuse(
      'REVIEW_REPLAY_RECORD_MISMATCH',
      'the record derived from the recorded responses differs from the given record (coverage, findings, outcome, ' +
        'usage or identity)',
    );
  }
  return derived;
}
