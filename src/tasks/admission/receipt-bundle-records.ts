/**
 * The signed records of one bundled transfer against its receipt row (docs/receipts.md "What verify
 * checks"): a command transfer's ExecutionRequest binding and the import's own record checks
 * (checkTransferRecord, not a second copy), or a review transfer's ReviewRecord and ReviewRequests.
 * Each returns the record's outcome; the caller compares it with the row's.
 */
import { decodeCommandRecipe, type CommandRecipe } from '../../contracts/collector/command-recipe.js';
import type { VerifiedTransferEnvelope } from '../../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
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
import { requestMismatch, wrapped, type CollectorRow } from './receipt-bundle-failures.js';

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
