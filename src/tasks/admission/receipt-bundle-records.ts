/**
 * The signed header and records of one bundled transfer against its receipt row
 * (docs/receipts.md "What verify checks"): the header binding; a command transfer's
 * ExecutionRequest binding and the import's own record checks (checkTransferRecord, not a second
 * copy); a review transfer's ReviewRecord and ReviewRequests. The two outcome checks return the
 * record's outcome; the caller compares it with the row's.
 */
import { decodeCommandRecipe, type CommandRecipe } from '../../contracts/collector/command-recipe.js';
import type { TransferHeader, VerifiedTransferEnvelope } from '../../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import type { BundleRegistration } from '../../contracts/receipt/bundle.js';
import type { WorkflowReceiptV2 } from '../../contracts/receipt/receipt-v2.js';
import { decodeReviewRecord, reviewRecordToJson, type ReviewRecord } from '../../contracts/review/record.js';
import {
  decodeReviewRequest,
  reviewRequestDigest,
  reviewRequestToJson,
  reviewTransportDigest,
} from '../../contracts/review/request.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { checkTransferRecord, parseCanonicalRecord, transferRuntimeIdentityDigest } from '../collector/execution.js';
import { fail, requestMismatch, wrapped, type CollectorRow } from './receipt-bundle-failures.js';

/** Header ↔ receipt: every header field the receipt row (or the receipt) also names. */
export function checkHeaderBinding(
  receipt: WorkflowReceiptV2,
  row: CollectorRow,
  registration: BundleRegistration,
  header: TransferHeader,
): void {
  const pairs: [string, unknown, unknown][] = [
    ['audience', header.audience, receipt.authority_id],
    ['repository_id', header.repository_id, receipt.repository_id],
    ['collector_profile_id', header.collector_profile_id, row.collector_profile_id],
    ['task_id', header.task_id, row.task_id],
    ['task_digest', header.task_digest, row.task_digest],
    ['attempt_id', header.attempt_id, row.attempt_id],
    ['attempt_digest', header.attempt_digest, row.attempt_digest],
    ['fence', header.fence, row.fence],
    ['origin.owner_id', header.origin.owner_id, row.origin.owner_id],
    ['origin.agent_id', header.origin.agent_id, row.origin.agent_id],
    ['origin.grant_id', header.origin.grant_id, row.origin.grant_id],
    ['origin.grant_generation', header.origin.grant_generation, row.origin.grant_generation],
    ['executor.registration_id', header.executor.registration_id, row.registration_id],
    ['executor.executor_id', header.executor.executor_id, registration.executor_id],
    ['executor.registration_epoch', header.executor.registration_epoch, row.registration_epoch],
    ['executor.verification_key_id', header.executor.verification_key_id, row.verification_key_id],
  ];
  const wrong = pairs.find(([, got, want]) => got !== want);
  if (wrong !== undefined) {
    fail(
      'RECEIPT_BUNDLE_HEADER_MISMATCH',
      `the signed header of task ${row.task_id}'s transfer has ${wrong[0]} ${String(wrong[1])}; the receipt says ` +
        `${String(wrong[2])}`,
      'the receipt must name exactly what the signed transfer header says',
      {
        task_id: row.task_id,
        field: `header.${wrong[0]}`,
      },
    );
  }
}

/** The signed ExecutionRequest ↔ the receipt subject, task, attempt and header; returns it with its recipe. */
function checkRequest(
  receipt: WorkflowReceiptV2,
  row: CollectorRow,
  envelope: VerifiedTransferEnvelope,
): { request: JsonObject; recipe: CommandRecipe; digest: string } {
  const bytes = (envelope.records[0] as VerifiedTransferEnvelope['records'][number]).bytes;
  const digest = sha256Hex(bytes);
  if (envelope.header.request_digest !== digest)
    requestMismatch(
      row,
      'header.request_digest',
      `has SHA-256 ${digest}; the signed header names request_digest ${envelope.header.request_digest}`,
    );
  let request: JsonObject;
  try {
    request = parseCanonicalRecord(bytes, 'IMPORT_REQUEST_MISMATCH', 'execution_request');
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    return requestMismatch(row, 'execution_request', `is not canonical strict JSON: ${error.message}`, error);
  }
  const s = receipt.subject;
  const pairs: [string, JsonValue | undefined, JsonValue][] = [
    ['version', request.version, 1n],
    ['kind', request.kind, 'command/v1'],
    ['attempt_id', request.attempt_id, row.attempt_id],
    ['generation', request.generation, row.fence],
    ['run_id', request.run_id, row.task_id],
    ['step_id', request.step_id, row.step_id],
    ['repository', request.repository, receipt.repository_id],
    ['revision', request.revision, s.revision],
    ['policy_epoch', request.policy_epoch, s.policy_epoch],
    ['change', request.change, { repository: receipt.repository_id, id: s.change_id }],
    ['change_version', request.change_version, s.change_version],
    ['context_digest', request.context_digest, s.context_digest],
    ['runtime_identity_digest', request.runtime_identity_digest, envelope.header.collector.runtime_identity_digest],
  ];
  for (const [field, got, want] of pairs) {
    const same =
      got !== undefined &&
      (typeof got === 'number' && typeof want === 'bigint'
        ? BigInt(got) === want
        : encodeCanonical(got).equals(encodeCanonical(want)));
    if (!same)
      requestMismatch(
        row,
        field,
        `names ${field} ${got === undefined ? 'nothing' : encodeCanonical(got).toString('utf8')}; the receipt ` +
          `needs ${encodeCanonical(want).toString('utf8')}`,
      );
  }
  const identity = request.runtime_identity;
  if (
    identity === null ||
    typeof identity !== 'object' ||
    Array.isArray(identity) ||
    transferRuntimeIdentityDigest(identity) !== envelope.header.collector.runtime_identity_digest
  ) {
    requestMismatch(
      row,
      'runtime_identity',
      'names a runtime identity whose SHA-256 is not the runtime_identity_digest of its signed header',
    );
  }
  let recipe: CommandRecipe;
  try {
    recipe = decodeCommandRecipe(encodeCanonical(request.recipe ?? null));
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    return requestMismatch(row, 'recipe', `holds no valid command recipe: ${error.message}`, error);
  }
  return { request, recipe, digest };
}

/** A command transfer: the request binding, then the import's record checks; returns the record's outcome. */
export function commandOutcome(
  receipt: WorkflowReceiptV2,
  row: CollectorRow,
  envelope: VerifiedTransferEnvelope,
): string {
  const details = { task_id: row.task_id, transfer_digest: row.transfer_digest };
  const { request, recipe, digest } = checkRequest(receipt, row, envelope);
  let outcome: string;
  try {
    const record = parseCanonicalRecord(
      (envelope.records[1] as VerifiedTransferEnvelope['records'][number]).bytes,
      'IMPORT_RECORD_INVALID',
      'execution_record',
    );
    // The request's generation was checked equal to the row's fence; the record check compares it as a u64.
    outcome = checkTransferRecord(record, { ...request, generation: row.fence }, digest, recipe);
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    return wrapped(
      'RECEIPT_BUNDLE_RECORD_INVALID',
      error,
      `the execution_record of task ${row.task_id}'s transfer fails the import's record checks`,
      'only a record the authority would import is evidence',
      details,
    );
  }
  return outcome;
}

/**
 * A review transfer (docs/receipts.md "What verify checks"): the ReviewRecord decodes strictly in
 * its canonical form and names the receipt's repository and revision; its review id is the
 * header's request_digest and its transport the header's collector identity; every
 * ReviewRequest decodes in canonical form, belongs to that review and has its call's request
 * digest. The replay against the revision's sources happened at import (the bundle carries no
 * sources); returns the record's outcome.
 */
export function reviewOutcome(
  receipt: WorkflowReceiptV2,
  row: CollectorRow,
  envelope: VerifiedTransferEnvelope,
): string {
  const details = { task_id: row.task_id, transfer_digest: row.transfer_digest };
  const records = envelope.records;
  const recordBytes = (records[records.length - 1] as VerifiedTransferEnvelope['records'][number]).bytes;
  let record: ReviewRecord;
  try {
    record = decodeReviewRecord(recordBytes);
    if (!encodeCanonical(reviewRecordToJson(record)).equals(Buffer.from(recordBytes)))
      throw new AgentscmError('REVIEW_REPLAY_RECORD_MISMATCH', 'the review record is not in its canonical encoding');
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    return wrapped(
      'RECEIPT_BUNDLE_RECORD_INVALID',
      error,
      `the review_record of task ${row.task_id}'s transfer does not decode`,
      'only a record the authority would import is evidence',
      details,
    );
  }
  const pairs: [string, string, string][] = [
    ['repository', record.repository, receipt.repository_id],
    ['revision', record.revision, receipt.subject.revision],
    ['review_id', record.review_id, envelope.header.request_digest],
    ['transport', reviewTransportDigest(record.transport), envelope.header.collector.runtime_identity_digest],
  ];
  const wrong = pairs.find(([, got, want]) => got !== want);
  if (wrong !== undefined)
    requestMismatch(
      row,
      wrong[0],
      `holds a review record with ${wrong[0]} ${wrong[1]}; the receipt and signed header need ${wrong[2]}`,
    );
  if (records.length - 1 !== record.calls.length)
    requestMismatch(
      row,
      'review_request',
      `carries ${records.length - 1} review request(s) for ${record.calls.length} recorded call(s)`,
    );
  record.calls.forEach((call, index) => {
    const bytes = (records[index] as VerifiedTransferEnvelope['records'][number]).bytes;
    let request;
    try {
      request = decodeReviewRequest(bytes);
    } catch (error) {
      if (!isAgentscmError(error)) throw error;
      return requestMismatch(
        row,
        'review_request',
        `has a review request ${index} that does not decode: ${error.message}`,
        error,
      );
    }
    if (
      !encodeCanonical(reviewRequestToJson(request)).equals(Buffer.from(bytes)) ||
      request.review_id !== record.review_id ||
      request.call_index !== call.call_index ||
      reviewRequestDigest(request) !== call.request_digest
    ) {
      requestMismatch(
        row,
        'review_request',
        `has a review request ${index} that is not the canonical request of recorded call ${call.call_index}`,
      );
    }
  });
  return record.outcome;
}
