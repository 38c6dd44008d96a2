/**
 * The import inside its transition (docs/collector-transfer.md "Import"): every header binding
 * against the claim and the retained attempt, the origin and registration rechecked through the
 * reserved connection, the records against the regenerated request (command) or the replay
 * (review); then the transfer is stored with its original bytes.
 */
import { checkOutputTailCounts, decodeOutputTail } from '../../contracts/collector/output-tail.js';
import type { TransferEnvelope } from '../../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import { isReviewDescriptor } from '../../contracts/review/collector-descriptor.js';
import { reviewTransportDigest } from '../../contracts/review/request.js';
import { sameAgent, sameExecutor } from '../../contracts/task/common.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { requireCurrentCollectorProfile } from '../../native/collector-profiles.js';
import { requireLiveOrigin } from '../../native/grants.js';
import { prepared } from '../../native/store.js';
import { findTaskWithAttempt, updateAttempt } from '../attempt-rows.js';
import type { TaskContext } from '../context.js';
import { findDerivedTask, requireCurrentSubject, type DerivedSubject } from '../derive.js';
import { type TransitionScope } from '../transition.js';
import { findCollectorAttemptByUpload, type CollectorAttemptRow } from './attempts.js';
import { commitAuthority } from './authority-commit.js';
import {
  checkTransferRecord,
  parseCanonicalRecord,
  transferExecutionRequest,
  transferRuntimeIdentityDigest,
} from './execution.js';
import { refuse, registrationNotCurrent, uploadUnknown } from './import-refusals.js';
import { type VerifiedTransfer } from './verified-transfer.js';

/**
 * What the validation-only replay of a review transfer established (src/collector/review/import.ts
 * runs it between prepareReviewImport and the import): the transfer it replayed, the review id of
 * the installed review and the outcome of the byte-identical derived record.
 */
export interface ReplayedReview {
  readonly transfer_digest: string;
  readonly review_id: string;
  readonly outcome: string;
}

/**
 * What an import answers and stores with its transfer (`status: "imported"`); an exact retry
 * answers the stored one with `status: "retained"`. An object type, so that a view embeds it.
 */
export type TransferAnswer = {
  readonly status: 'imported' | 'retained';
  readonly upload_request_id: string;
  readonly transfer_digest: string;
  readonly collector_profile_id: string;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly fence: bigint;
  readonly outcome: string;
  readonly record_digest: string;
};

/** The observed byte counts of a checked ExecutionRecord's streams. */
function observedCounts(record: JsonObject): { stdout: bigint; stderr: bigint } {
  const count = (name: 'stdout' | 'stderr'): bigint => {
    const value = (record[name] as JsonObject).observed_bytes;
    return typeof value === 'bigint' ? value : BigInt(value as number);
  };
  return { stdout: count('stdout'), stderr: count('stderr') };
}

function same(a: JsonValue, b: JsonValue): boolean {
  return encodeCanonical(a).equals(encodeCanonical(b));
}

/** Every header binding against the claim, the records against the regenerated request; then store. */
export function importWithin(
  scope: TransitionScope,
  ctx: TaskContext,
  transfer: VerifiedTransfer,
  derived: DerivedSubject,
  replayed: ReplayedReview | undefined,
): TransferAnswer {
  const { journal, auth, nowMs } = scope;
  const { envelope, bytes, digest } = transfer;
  const h = envelope.header;
  const claim: CollectorAttemptRow | null = findCollectorAttemptByUpload(journal, h.upload_request_id);
  if (claim === null) throw uploadUnknown(h);
  const d = claim.descriptor;
  const hint = 'the header must carry exactly the bindings of the descriptor the collector was given';
  if (h.repository_id !== d.repository_id || h.repository_id !== ctx.origin?.repository) {
    refuse(
      'IMPORT_REPOSITORY_MISMATCH',
      `the transfer names repository ${h.repository_id}; the claim and grant are for ${d.repository_id}`,
      hint,
      { field: 'repository_id' },
    );
  }
  if (h.collector_profile_id !== d.collector_profile_id)
    refuse(
      'IMPORT_PROFILE_MISMATCH',
      `the transfer names collector profile ${h.collector_profile_id}, the claim ${d.collector_profile_id}`,
      hint,
      { field: 'collector_profile_id' },
    );
  if (h.task_id !== d.task.task_id)
    refuse('IMPORT_TASK_MISMATCH', `the transfer names task ${h.task_id}, the claim ${d.task.task_id}`, hint, {
      field: 'task_id',
    });
  if (h.task_digest !== d.task.task_digest)
    refuse(
      'IMPORT_TASK_MISMATCH',
      `the transfer names task digest ${h.task_digest}, the claim ${d.task.task_digest}`,
      hint,
      { field: 'task_digest' },
    );
  if (h.attempt_id !== d.attempt.attempt_id)
    refuse(
      'IMPORT_ATTEMPT_MISMATCH',
      `the transfer names attempt ${h.attempt_id}, the claim ${d.attempt.attempt_id}`,
      hint,
      { field: 'attempt_id' },
    );
  if (h.attempt_digest !== d.attempt.attempt_digest)
    refuse(
      'IMPORT_ATTEMPT_MISMATCH',
      `the transfer names attempt digest ${h.attempt_digest}, the claim ${d.attempt.attempt_digest}`,
      hint,
      { field: 'attempt_digest' },
    );
  if (h.execution_operation_id !== d.attempt.execution_operation_id) {
    refuse(
      'IMPORT_EXECUTION_MISMATCH',
      `the transfer names execution operation ${h.execution_operation_id}, the claim ` +
        `${d.attempt.execution_operation_id}`,
      hint,
      { field: 'execution_operation_id' },
    );
  }
  const found = findTaskWithAttempt(journal, d.task.task_id, d.attempt.attempt_id);
  const retained = found?.attempt?.() ?? null;
  if (
    found === null ||
    retained === null ||
    found.task.digest !== d.task.task_digest ||
    retained.digest !== d.attempt.attempt_digest
  ) {
    throw new AgentscmError(
      'TASK_JOURNAL_INCONSISTENT',
      `the collector claim of attempt ${d.attempt.attempt_id} has no matching retained attempt`,
    );
  }
  if (h.fence !== d.attempt.fence || retained.state === 'replaced') {
    refuse(
      'IMPORT_FENCE_STALE',
      `the transfer carries fence ${h.fence}; attempt ${d.attempt.attempt_id} ` +
        (retained.state === 'replaced'
          ? `was superseded by fence ${retained.superseded_by_fence ?? 0n}`
          : `holds fence ${d.attempt.fence}`),
      'the attempt was reconciled: its evidence no longer counts; claim and collect again',
      {
        field: 'fence',
        fence: h.fence.toString(),
      },
    );
  }
  if (retained.state !== 'active')
    refuse(
      'IMPORT_ATTEMPT_NOT_ACTIVE',
      `attempt ${d.attempt.attempt_id} is ${retained.state}`,
      'claim and collect again',
      { state: retained.state },
    );
  if (
    !same({ ...h.origin }, { ...claim.origin }) ||
    !sameAgent({ owner_id: claim.origin.owner_id, agent_id: claim.origin.agent_id }, ctx.actor)
  ) {
    refuse(
      'IMPORT_ORIGIN_MISMATCH',
      `the transfer names origin ${h.origin.owner_id}/${h.origin.agent_id} (grant ${h.origin.grant_id}, ` +
        `generation ${h.origin.grant_generation}); the claim was made by ` +
        `${claim.origin.owner_id}/${claim.origin.agent_id} (grant ${claim.origin.grant_id}, generation ` +
        `${claim.origin.grant_generation}) and the upload by ${ctx.actor.owner_id}/${ctx.actor.agent_id}`,
      'upload as the actor whose grant claimed the task',
      { field: 'origin' },
    );
  }
  try {
    requireLiveOrigin(auth, claim.origin);
  } catch (error) {
    if (isAgentscmError(error) && error.code === 'GRANT_NOT_LIVE') {
      refuse(
        'IMPORT_ORIGIN_NOT_LIVE',
        `the originating grant ${claim.origin.grant_id} (generation ${claim.origin.grant_generation}) was ` +
          `revoked or rotated since the claim`,
        'claim again under the live grant and collect again',
        { grant_id: claim.origin.grant_id },
      );
    }
    throw error;
  }
  if (!sameExecutor(h.executor, d.executor))
    refuse(
      'IMPORT_EXECUTOR_MISMATCH',
      `the transfer names executor ${h.executor.registration_id}/${h.executor.executor_id} epoch ` +
        `${h.executor.registration_epoch}; the claim bound ${d.executor.registration_id}/${d.executor.executor_id} ` +
        `epoch ${d.executor.registration_epoch}`,
      hint,
      { field: 'executor' },
    );
  let profile;
  try {
    profile = requireCurrentCollectorProfile(auth, d.collector_profile_id).installed.profile;
  } catch (error) {
    if (isAgentscmError(error) && error.code === 'REGISTRATION_NOT_CURRENT')
      throw registrationNotCurrent(d.executor.registration_id);
    throw error;
  }
  // The subject compiled before the transaction is still current through the reserved connection.
  requireCurrentSubject(auth, derived.base);
  const entry = findDerivedTask(derived, d.task.task_id, d.task.task_digest);
  let outcome: string;
  // The typed record: a review's last record, a command's execution_record (a command_output_tail may follow it).
  const recordBytes = (
    (envelope.records.find((r) => r.kind === 'execution_record') ??
      envelope.records[envelope.records.length - 1]) as TransferEnvelope['records'][number]
  ).bytes;
  if (transfer.kind === 'review') {
    if (profile.kind !== 'finite_review' || !isReviewDescriptor(d) || entry.step.action.kind !== 'review') {
      refuse(
        'IMPORT_RECORD_INVALID',
        `the transfer carries review records, but collector profile ${d.collector_profile_id} is a ` +
          `${profile.kind} profile for a ${entry.step.action.kind} step`,
        "upload the transfer the profile's own collector kind produces",
        { field: 'records' },
      );
    }
    const transport = reviewTransportDigest(profile.transport);
    if (h.collector.runtime_identity_digest !== transport) {
      refuse(
        'IMPORT_RUNTIME_MISMATCH',
        `the collector reports transport identity ${h.collector.runtime_identity_digest}; the finite-review ` +
          `profile pins ${transport}`,
        'collect with the executable, provider scope and model the profile pins',
        { field: 'collector.runtime_identity_digest' },
      );
    }
    if (replayed?.transfer_digest !== digest)
      throw new AgentscmError(
        'INTERNAL',
        'a review transfer is imported only after its replay (importCollectorTransferAsync)',
      );
    if (h.request_digest !== replayed.review_id) {
      refuse(
        'IMPORT_REQUEST_MISMATCH',
        `the header names request digest ${h.request_digest}; the review the authority installs for this task ` +
          `has review id ${replayed.review_id}`,
        hint,
        { field: 'request_digest' },
      );
    }
    outcome = replayed.outcome;
  } else {
    if (profile.kind !== 'command' || isReviewDescriptor(d) || entry.step.action.kind !== 'command') {
      refuse(
        'IMPORT_RECORD_INVALID',
        `the transfer carries execution records, but collector profile ${d.collector_profile_id} is a ` +
          `${profile.kind} profile for a ${entry.step.action.kind} step`,
        "upload the transfer the profile's own collector kind produces",
        { field: 'records' },
      );
    }
    if (h.collector.runtime_identity_digest !== profile.runtime_identity_digest) {
      refuse(
        'IMPORT_RUNTIME_MISMATCH',
        `the collector reports runtime identity ${h.collector.runtime_identity_digest}; the profile pins ` +
          `${profile.runtime_identity_digest}`,
        'collect with the runtime the profile pins (agent-task runtime-probe)',
        { field: 'collector.runtime_identity_digest' },
      );
    }
    const requestBytes = (envelope.records[0] as TransferEnvelope['records'][number]).bytes;
    const requestDigestValue = sha256Hex(requestBytes);
    if (h.request_digest !== requestDigestValue)
      refuse(
        'IMPORT_REQUEST_MISMATCH',
        `the header names request digest ${h.request_digest}; the execution_request record has SHA-256 ` +
          `${requestDigestValue}`,
        hint,
        { field: 'request_digest' },
      );
    const sent = parseCanonicalRecord(requestBytes, 'IMPORT_REQUEST_MISMATCH', 'execution_request');
    const identity = sent.runtime_identity;
    if (
      identity === null ||
      typeof identity !== 'object' ||
      Array.isArray(identity) ||
      transferRuntimeIdentityDigest(identity) !== profile.runtime_identity_digest
    ) {
      refuse(
        'IMPORT_RUNTIME_MISMATCH',
        "the execution request names a runtime identity whose SHA-256 is not the profile's runtime_identity_digest",
        'collect with the runtime the profile pins',
        { field: 'runtime_identity' },
      );
    }
    if (entry.step.action.kind !== 'command')
      throw new AgentscmError('INTERNAL', 'a collector claim names a command task');
    const expected = transferExecutionRequest({
      descriptor: d,
      step_id: profile.step_id,
      recipe_path: entry.step.action.recipe_path,
      recipe_digest: profile.recipe_digest,
      runtime_identity: identity,
    });
    if (!encodeCanonical(expected).equals(Buffer.from(requestBytes))) {
      refuse(
        'IMPORT_REQUEST_MISMATCH',
        'the execution_request record is not the request the authority regenerates from the profile recipe, the ' +
          'exact revision and the context',
        'collect from the descriptor unchanged',
        { field: 'execution_request' },
      );
    }
    const record = parseCanonicalRecord(recordBytes, 'IMPORT_RECORD_INVALID', 'execution_record');
    outcome = checkTransferRecord(record, expected, requestDigestValue, profile.recipe);
    // The diagnostic tail never changes the outcome; it must be well formed and count the record's bytes.
    const tailEntry = envelope.records.find((r) => r.kind === 'command_output_tail');
    if (tailEntry !== undefined) checkOutputTailCounts(decodeOutputTail(tailEntry.bytes), observedCounts(record));
  }
  if (!updateAttempt(journal, retained, ['active'], { state: 'finished' }, nowMs))
    throw new AgentscmError('INTERNAL', 'the attempt changed inside its transaction');
  const response: TransferAnswer = {
    status: 'imported',
    upload_request_id: h.upload_request_id,
    transfer_digest: digest,
    collector_profile_id: d.collector_profile_id,
    task_id: d.task.task_id,
    task_digest: d.task.task_digest,
    attempt_id: d.attempt.attempt_id,
    attempt_digest: d.attempt.attempt_digest,
    fence: d.attempt.fence,
    outcome,
    record_digest: sha256Hex(recordBytes),
  };
  // The transfer row is the authority's: written through the reserved connection and committed
  // before the journal's attempt update (docs/collector-transfer.md "Where transfers and receipts live").
  const seq = (
    prepared(auth, 'SELECT coalesce(max(seq), 0) + 1 AS next FROM collector_transfers').get() as {
      next: number;
    }
  ).next;
  prepared(
    auth,
    'INSERT INTO collector_transfers (upload_request_id, attempt_id, task_id, transfer_digest, length, envelope, ' +
      'outcome, response, imported_at_ms, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    h.upload_request_id,
    d.attempt.attempt_id,
    d.task.task_id,
    digest,
    bytes.byteLength,
    Buffer.from(bytes),
    outcome,
    encodeCanonical(response),
    nowMs,
    seq,
  );
  commitAuthority(scope);
  return response;
}
