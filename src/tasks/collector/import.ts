/**
 * Authority-side import of a collector transfer (spec "Operator-enrolled collector transfer";
 * docs/wire.md "Collector transfer envelope v1"; docs/collector-transfer.md "Import"). One core
 * function that every upload path calls: `agent-task collect` and `agent-task upload` into the
 * local authority, and the hub's upload route.
 */
import type { TransferEnvelope, TransferHeader } from '../../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError, type ErrorCode } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import { isReviewDescriptor } from '../../contracts/review/collector-descriptor.js';
import { REVIEW_LIMITS, type ReviewAction } from '../../contracts/review/policy.js';
import { checkRecordAgainstProfile } from '../../contracts/review/profile.js';
import { decodeReviewRecord } from '../../contracts/review/record.js';
import { reviewTransportDigest } from '../../contracts/review/request.js';
import { sameAgent, sameExecutor } from '../../contracts/task/common.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { getCollectorProfile, requireCurrentCollectorProfile } from '../../native/collector-profiles.js';
import { requireLiveOrigin } from '../../native/grants.js';
import { readRevisionFile } from '../../native/revisions.js';
import { journalStatement, type Journal } from '../../workflows/journal.js';
import type { TaskConnections } from '../connections.js';
import type { TaskContext } from '../context.js';
import { deriveSubject, findDerivedTask, requireCurrentSubject, type DerivedSubject } from '../derive.js';
import type { GrantAuthorization } from '../grant-guard.js';
import { findRetainedTask, findTaskWithAttempt, updateAttempt } from '../journal-rows.js';
import { readAuthority, readJournal, runTransition, type TransitionScope } from '../transition.js';
import { findCollectorAttemptByUpload, type CollectorAttemptRow } from './attempts.js';
import {
  checkTransferRecord,
  parseCanonicalRecord,
  shown,
  transferExecutionRequest,
  transferRuntimeIdentityDigest,
} from './execution.js';
import { strictJsonParse } from './json.js';
import { writeReceiptIfComplete } from './receipts.js';
import { isVerifiedTransfer, readVerifiedTransfer, type VerifiedTransfer } from './verified-transfer.js';

export interface CollectorImportOptions {
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: (() => number) | undefined;
  /** Connections kept open by an in-process adapter; absent → the import opens its own. */
  readonly connections?: TaskConnections | undefined;
}

/**
 * The answer of an import (and of its exact retry), a JSON object:
 * `{status: "imported" | "retained", upload_request_id, transfer_digest, task_id, attempt_id,
 * fence, outcome, record_digest, receipt: {receipt_digest, state} | null,
 * currently_applicable, applicability: {...}}`. `retained` is the historical view of an
 * identical earlier upload; `currently_applicable` is read now and reported separately.
 */
export type CollectorImportView = JsonObject;

/**
 * Import one signed transfer envelope as the grant's actor into the authority of `dataDir`.
 *
 * Order: the envelope is read and its signature verified with the CURRENT registration's key
 * and audience = this authority before anything else; then, under the grant guard, an exact
 * retry (same upload_request_id, same bytes) answers the retained view and changed bytes under
 * the same upload request are COLLECTOR_UPLOAD_CONFLICT; then every header binding is checked
 * against the claimed attempt, the pinned ExecutionRequest is regenerated and compared, the
 * record is validated, and the transfer is stored with its original bytes in one journal
 * transaction under the native writer reservation (with the grant recheck). A receipt v2 is
 * written when the graph completes. Every refusal is an AgentscmError with a stable code
 * (docs/errors.md "collector import") and changes nothing.
 */
function importContext(dataDir: string, grant: GrantAuthorization, options: CollectorImportOptions): TaskContext {
  return {
    dataDir,
    actor: grant.actor,
    repository: grant.repository,
    profile: 'default',
    target: 'main',
    guard: grant.guard,
    origin: grant.origin,
    now: options.now,
    connections: options.connections,
  };
}

/**
 * Read and verify an uploaded envelope once, against the authority of `dataDir` (see
 * collector-verified-transfer.ts): the one parse and the one signature check of an upload.
 */
export function readUploadedTransfer(
  dataDir: string,
  envelopeBytes: Uint8Array,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): VerifiedTransfer {
  const ctx = importContext(dataDir, grant, options);
  return readVerifiedTransfer(envelopeBytes, (body) => readAuthority(ctx, body));
}

function verifiedOf(
  dataDir: string,
  upload: Uint8Array | VerifiedTransfer,
  grant: GrantAuthorization,
  options: CollectorImportOptions,
): VerifiedTransfer {
  return isVerifiedTransfer(upload) ? upload : readUploadedTransfer(dataDir, upload, grant, options);
}

/**
 * Import one upload: its bytes (read and verified here) or the VerifiedTransfer the caller read
 * with readUploadedTransfer (then nothing is parsed or verified again).
 */
export function importCollectorTransfer(
  dataDir: string,
  upload: Uint8Array | VerifiedTransfer,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): CollectorImportView {
  const ctx = importContext(dataDir, grant, options);
  // 1. The envelope itself: size, magic, header, framing and record digests (pure), then the
  //    signature with the CURRENT registration's key and the audience.
  const transfer = verifiedOf(dataDir, upload, grant, options);
  // 2. The combined caller/origin authorization (the guard authenticates the caller's grant
  //    again; a retained upload is answered only to its claim's originating actor), then the
  //    exact-retry lookup, before any compilation.
  const retry = retainedUpload(ctx, transfer);
  if (retry !== null) return withApplicability(ctx, retry);
  if (!transfer.registrationCurrent) throw registrationNotCurrent(transfer.envelope.header.executor.registration_id);
  // 3. Compile the subject the claim bound (its tasks' recipe paths), then import under the
  //    native writer reservation, and write the receipt in a transaction of its own.
  return importClaimed(ctx, transfer, claimOf(ctx, transfer), undefined);
}

/** The guard, then the exact-retry lookup: the retained answer of an identical upload, or null. */
function retainedUpload(ctx: TaskContext, transfer: VerifiedTransfer): JsonObject | null {
  return ctx.guard(ctx.actor, 'collector_upload', () =>
    readJournal(
      ctx,
      () => null,
      (journal) => retainedAnswer(journal, ctx, transfer.envelope.header.upload_request_id, transfer.digest),
      true,
    ),
  );
}

/** The collector claim the upload request names (IMPORT_UPLOAD_UNKNOWN when none). */
function claimOf(ctx: TaskContext, transfer: VerifiedTransfer): CollectorAttemptRow {
  const h = transfer.envelope.header;
  const claimed = readJournal(
    ctx,
    () => null,
    (journal) => findCollectorAttemptByUpload(journal, h.upload_request_id),
  );
  if (claimed === null) throw uploadUnknown(h);
  return claimed;
}

/** Compile the claim's subject, import under the native writer reservation, then the receipt. */
function importClaimed(
  ctx: TaskContext,
  transfer: VerifiedTransfer,
  claimed: CollectorAttemptRow,
  replayed: ReplayedReview | undefined,
): CollectorImportView {
  const { envelope } = transfer;
  const selection = {
    repository: claimed.descriptor.repository_id,
    profile: claimed.descriptor.workflow_profile,
    target: claimed.descriptor.subject.target,
    change_id: claimed.descriptor.subject.change_id,
    context_digest: claimed.descriptor.subject.context_digest,
  };
  const derived = readAuthority(ctx, (auth) => deriveSubject(auth, selection));
  const answer = runTransition(
    ctx,
    'collector_upload',
    (scope) =>
      retainedAnswer(scope.journal, ctx, envelope.header.upload_request_id, transfer.digest) ??
      importWithin(scope, ctx, transfer, derived, replayed),
    () => {
      throw uploadUnknown(envelope.header);
    },
  );
  if (answer.status !== 'imported') return withApplicability(ctx, answer);
  // The import is committed: a receipt that cannot be written now (the grant revoked meanwhile,
  // contention, the subject moved) is reported, and collector_finalize writes it later. `false`:
  // the receipt reads no envelope (its rows come from the claims and transfer rows), so this
  // upload's envelope stays parsed and verified once, above; only finalize re-verifies stored bytes.
  let receipt: JsonObject;
  try {
    receipt = runTransition(
      ctx,
      'collector_upload',
      (scope) => writeReceiptIfComplete(scope, derived, false),
      () => {
        throw uploadUnknown(envelope.header);
      },
    );
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    receipt = { status: 'incomplete', reason: `${error.code}: ${error.message}` };
  }
  return { ...answer, receipt, currently_applicable: true };
}

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

/** The inputs of a review transfer's replay, read from the authority (nothing is written). */
export interface ReviewImportInputs {
  readonly transfer_digest: string;
  readonly repository: string;
  readonly revision: string;
  /** The step's review action as the installed plan declares it. */
  readonly action: ReviewAction;
  readonly policyBytes: Buffer;
  readonly requests: readonly Buffer[];
  readonly record: Buffer;
}

/** A review upload ready for its replay: the transfer read once, its claim, the replay's inputs. */
export interface PreparedReviewImport {
  readonly transfer: VerifiedTransfer;
  readonly claimed: CollectorAttemptRow;
  readonly inputs: ReviewImportInputs;
}

/** How a review upload goes on: an exact retry's retained answer, or a replay then the import. */
export type ReviewImportStart =
  | { readonly retained: CollectorImportView; readonly prepared?: undefined }
  | { readonly retained?: undefined; readonly prepared: PreparedReviewImport };

/**
 * The first half of a review transfer's import (spec: "For review it rebuilds immutable sources
 * and the installed request, then runs the existing finite controller against a validation-only
 * replay transport and journal"): the envelope's signature with the current registration's key
 * and the audience (done once, by readUploadedTransfer, when given bytes), the grant, then —
 * unless this is an exact retry (answered with its retained view) — the claim, the
 * finite-review profile, the task's review step in the current compiled subject, the policy
 * bytes at the exact revision, and the record checked against every pin of the profile
 * (REVIEW_PROFILE_MISMATCH). Changes nothing.
 */
export function prepareReviewImport(
  dataDir: string,
  upload: Uint8Array | VerifiedTransfer,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): ReviewImportStart {
  const ctx = importContext(dataDir, grant, options);
  const transfer = verifiedOf(dataDir, upload, grant, options);
  const { envelope, digest } = transfer;
  const h = envelope.header;
  const retry = retainedUpload(ctx, transfer);
  if (retry !== null) return { retained: withApplicability(ctx, retry) };
  const claimed = claimOf(ctx, transfer);
  const d = claimed.descriptor;
  if (!isReviewDescriptor(d)) {
    refuse(
      'IMPORT_RECORD_INVALID',
      `the transfer carries review records, but upload request ${h.upload_request_id} belongs to a command claim`,
      "upload the transfer the claim's own collector kind produces",
      { field: 'records' },
    );
  }
  const selection = {
    repository: d.repository_id,
    profile: d.workflow_profile,
    target: d.subject.target,
    change_id: d.subject.change_id,
    context_digest: d.subject.context_digest,
  };
  const inputs = readAuthority(ctx, (auth): ReviewImportInputs => {
    const profile = getCollectorProfile(auth, d.collector_profile_id).profile;
    if (profile.kind !== 'finite_review')
      refuse(
        'IMPORT_PROFILE_MISMATCH',
        `collector profile ${d.collector_profile_id} is not a finite-review profile`,
        'upload review records only under a finite-review profile',
        { field: 'collector_profile_id' },
      );
    const derived = deriveSubject(auth, selection);
    const entry = findDerivedTask(derived, d.task.task_id, d.task.task_digest);
    const action = entry.step.action;
    if (action.kind !== 'review') throw new AgentscmError('INTERNAL', 'a finite-review claim names a review task');
    const policyBytes = readRevisionFile(auth, d.repository_id, d.subject.revision, action.policy_path, {
      maxBytes: REVIEW_LIMITS.maxPolicyBytes,
    });
    if (sha256Hex(policyBytes) !== action.policy_sha256 || action.policy_sha256 !== profile.policy_sha256) {
      throw new AgentscmError(
        'REVIEW_PROFILE_MISMATCH',
        `the policy the installed plan binds (${action.policy_sha256}) is not the one finite-review profile ${d.collector_profile_id} pins (${profile.policy_sha256})`,
        { details: { field: 'policy_sha256' } },
      );
    }
    const records = envelope.records;
    const recordBytes = Buffer.from((records[records.length - 1] as TransferEnvelope['records'][number]).bytes);
    let record;
    try {
      record = decodeReviewRecord(recordBytes);
    } catch (error) {
      if (!isAgentscmError(error)) throw error;
      refuse(
        'IMPORT_RECORD_INVALID',
        `the review_record does not decode: [${error.code}] ${error.message}`,
        'upload the record the review controller wrote, unchanged',
        { field: 'review_record', cause_code: error.code },
      );
    }
    checkRecordAgainstProfile(profile, record);
    const { policy_path: _path, policy_sha256: _sha, ...declared } = action;
    return {
      transfer_digest: digest,
      repository: d.repository_id,
      revision: d.subject.revision,
      action: declared,
      policyBytes,
      requests: records.slice(0, -1).map((r) => Buffer.from(r.bytes)),
      record: recordBytes,
    };
  });
  return { prepared: { transfer, claimed, inputs } };
}

/**
 * The second half: after the replay of `prepared` derived a byte-identical record, import it
 * (the transfer is not read, verified or looked up again; the transition rechecks the grant and
 * answers a concurrent identical upload's retained view under the writer reservation).
 */
export function importReviewTransfer(
  dataDir: string,
  prepared: PreparedReviewImport,
  replayed: ReplayedReview,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): CollectorImportView {
  const { transfer } = prepared;
  if (!isVerifiedTransfer(transfer))
    throw new AgentscmError('INTERNAL', 'a review import needs the transfer prepareReviewImport read');
  if (!transfer.registrationCurrent) throw registrationNotCurrent(transfer.envelope.header.executor.registration_id);
  return importClaimed(importContext(dataDir, grant, options), transfer, prepared.claimed, replayed);
}

function refuse(code: ErrorCode, message: string, hint: string, details: Record<string, unknown> = {}): never {
  throw new AgentscmError(code, message, { hint, details });
}

function uploadUnknown(header: TransferHeader): AgentscmError {
  return new AgentscmError(
    'IMPORT_UPLOAD_UNKNOWN',
    `upload request ${header.upload_request_id} names no collector claim of this authority`,
    {
      hint: 'upload only the envelope collected for a descriptor of this authority (agent-task claim --profile)',
      details: { upload_request_id: header.upload_request_id },
    },
  );
}

function registrationNotCurrent(registrationId: string): AgentscmError {
  return new AgentscmError(
    'IMPORT_REGISTRATION_NOT_CURRENT',
    `executor registration ${registrationId} is revoked or superseded by a newer epoch`,
    {
      hint: 'enroll again, install a profile for the new epoch, claim and collect again',
      details: { registration_id: registrationId },
    },
  );
}

interface RetainedTransfer {
  transfer_digest: string;
  response: Buffer;
}

/**
 * The caller half of the combined caller/origin authorization of a retained upload (spec "An
 * exact committed upload retry is looked up after current combined caller/origin
 * authorization"): the guard has authenticated the caller's grant again; the retained upload is
 * answered only on the repository of that grant and only to the actor whose grant claimed it —
 * the same refusals as a first upload by anyone else. Whether the originating grant itself is
 * still live is the answer's applicability (`origin_current`), read now beside it.
 */
function authorizeRetainedUpload(ctx: TaskContext, claim: CollectorAttemptRow): void {
  const d = claim.descriptor;
  if (d.repository_id !== ctx.origin?.repository) {
    refuse(
      'IMPORT_REPOSITORY_MISMATCH',
      `upload request ${d.upload_request_id} belongs to repository ${d.repository_id}; the uploading grant is for ${ctx.origin?.repository ?? 'no repository'}`,
      'upload with a grant of the repository that claimed the task',
      { field: 'repository_id' },
    );
  }
  if (!sameAgent({ owner_id: claim.origin.owner_id, agent_id: claim.origin.agent_id }, ctx.actor)) {
    refuse(
      'IMPORT_ORIGIN_MISMATCH',
      `upload request ${d.upload_request_id} was claimed by ${claim.origin.owner_id}/${claim.origin.agent_id}, not by the uploading actor ${ctx.actor.owner_id}/${ctx.actor.agent_id}`,
      'upload (or retry) as the actor whose grant claimed the task',
      { field: 'origin' },
    );
  }
}

/**
 * The historical answer of an identical earlier upload, after the caller is authorized for the
 * claim it belongs to; other bytes under the same upload request conflict.
 */
function retainedAnswer(
  journal: Journal,
  ctx: TaskContext,
  uploadRequestId: string,
  digest: string,
): JsonObject | null {
  const row = journalStatement(
    journal,
    'SELECT transfer_digest, response FROM collector_transfers WHERE upload_request_id = ?',
  ).get(uploadRequestId) as RetainedTransfer | undefined;
  if (row === undefined) return null;
  const claim = findCollectorAttemptByUpload(journal, uploadRequestId);
  if (claim === null)
    throw new AgentscmError(
      'TASK_JOURNAL_INCONSISTENT',
      `the retained transfer of upload request ${uploadRequestId} has no collector claim`,
    );
  authorizeRetainedUpload(ctx, claim);
  if (row.transfer_digest !== digest) {
    refuse(
      'IMPORT_UPLOAD_CONFLICT',
      `upload request ${uploadRequestId} already imported a transfer with SHA-256 ${row.transfer_digest}, not ${digest}`,
      'retry an upload only with its identical retained bytes (agent-task retry-upload)',
      {
        upload_request_id: uploadRequestId,
        transfer_digest: row.transfer_digest,
      },
    );
  }
  const value = strictJsonParse(row.response);
  return { ...(value as JsonObject), status: 'retained' };
}

/**
 * The retained view with its applicability read now, reported beside it: whether the task's
 * subject is still current, the profile's registration still current and the originating grant
 * still live at its claimed generation (not revoked, not rotated). A stale answer is still the
 * historical answer of that upload; `currently_applicable` is true only when all three hold.
 */
function withApplicability(ctx: TaskContext, answer: JsonObject): JsonObject {
  const retained = readJournal(
    ctx,
    () => null,
    (journal) => ({
      task: findRetainedTask(journal, shown(answer.task_id)),
      claim: findCollectorAttemptByUpload(journal, shown(answer.upload_request_id)),
    }),
  );
  return readAuthority(ctx, (auth) => {
    const holds = (check: () => void): boolean => {
      try {
        check();
        return true;
      } catch (error) {
        if (!isAgentscmError(error)) throw error;
        return false;
      }
    };
    const registrationCurrent = holds(() => requireCurrentCollectorProfile(auth, shown(answer.collector_profile_id)));
    const task = retained?.task ?? null;
    const claim = retained?.claim ?? null;
    const subjectCurrent = task !== null && holds(() => requireCurrentSubject(auth, task.task.subject));
    const originCurrent = claim !== null && holds(() => requireLiveOrigin(auth, claim.origin));
    return {
      ...answer,
      currently_applicable: registrationCurrent && subjectCurrent && originCurrent,
      applicability: {
        subject_current: subjectCurrent,
        registration_current: registrationCurrent,
        origin_current: originCurrent,
      },
    };
  });
}

function same(a: JsonValue, b: JsonValue): boolean {
  return encodeCanonical(a).equals(encodeCanonical(b));
}

/** Every header binding against the claim, the records against the regenerated request; then store. */
function importWithin(
  scope: TransitionScope,
  ctx: TaskContext,
  transfer: VerifiedTransfer,
  derived: DerivedSubject,
  replayed: ReplayedReview | undefined,
): JsonObject {
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
      `the transfer names execution operation ${h.execution_operation_id}, the claim ${d.attempt.execution_operation_id}`,
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
      `the transfer carries fence ${h.fence}; attempt ${d.attempt.attempt_id} ${retained.state === 'replaced' ? `was superseded by fence ${retained.superseded_by_fence ?? 0n}` : `holds fence ${d.attempt.fence}`}`,
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
      `the transfer names origin ${h.origin.owner_id}/${h.origin.agent_id} (grant ${h.origin.grant_id}, generation ${h.origin.grant_generation}); the claim was made by ${claim.origin.owner_id}/${claim.origin.agent_id} (grant ${claim.origin.grant_id}, generation ${claim.origin.grant_generation}) and the upload by ${ctx.actor.owner_id}/${ctx.actor.agent_id}`,
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
        `the originating grant ${claim.origin.grant_id} (generation ${claim.origin.grant_generation}) was revoked or rotated since the claim`,
        'claim again under the live grant and collect again',
        { grant_id: claim.origin.grant_id },
      );
    }
    throw error;
  }
  if (!sameExecutor(h.executor, d.executor))
    refuse(
      'IMPORT_EXECUTOR_MISMATCH',
      `the transfer names executor ${h.executor.registration_id}/${h.executor.executor_id} epoch ${h.executor.registration_epoch}; the claim bound ${d.executor.registration_id}/${d.executor.executor_id} epoch ${d.executor.registration_epoch}`,
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
  const recordBytes = (envelope.records[envelope.records.length - 1] as TransferEnvelope['records'][number]).bytes;
  if (transfer.kind === 'review') {
    if (profile.kind !== 'finite_review' || !isReviewDescriptor(d) || entry.step.action.kind !== 'review') {
      refuse(
        'IMPORT_RECORD_INVALID',
        `the transfer carries review records, but collector profile ${d.collector_profile_id} is a ${profile.kind} profile for a ${entry.step.action.kind} step`,
        "upload the transfer the profile's own collector kind produces",
        { field: 'records' },
      );
    }
    const transport = reviewTransportDigest(profile.transport);
    if (h.collector.runtime_identity_digest !== transport) {
      refuse(
        'IMPORT_RUNTIME_MISMATCH',
        `the collector reports transport identity ${h.collector.runtime_identity_digest}; the finite-review profile pins ${transport}`,
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
        `the header names request digest ${h.request_digest}; the review the authority installs for this task has review id ${replayed.review_id}`,
        hint,
        { field: 'request_digest' },
      );
    }
    outcome = replayed.outcome;
  } else {
    if (profile.kind !== 'command' || isReviewDescriptor(d) || entry.step.action.kind !== 'command') {
      refuse(
        'IMPORT_RECORD_INVALID',
        `the transfer carries execution records, but collector profile ${d.collector_profile_id} is a ${profile.kind} profile for a ${entry.step.action.kind} step`,
        "upload the transfer the profile's own collector kind produces",
        { field: 'records' },
      );
    }
    if (h.collector.runtime_identity_digest !== profile.runtime_identity_digest) {
      refuse(
        'IMPORT_RUNTIME_MISMATCH',
        `the collector reports runtime identity ${h.collector.runtime_identity_digest}; the profile pins ${profile.runtime_identity_digest}`,
        'collect with the runtime the profile pins (agent-task runtime-probe)',
        { field: 'collector.runtime_identity_digest' },
      );
    }
    const requestBytes = (envelope.records[0] as TransferEnvelope['records'][number]).bytes;
    const requestDigestValue = sha256Hex(requestBytes);
    if (h.request_digest !== requestDigestValue)
      refuse(
        'IMPORT_REQUEST_MISMATCH',
        `the header names request digest ${h.request_digest}; the execution_request record has SHA-256 ${requestDigestValue}`,
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
        'the execution_request record is not the request the authority regenerates from the profile recipe, the exact revision and the context',
        'collect from the descriptor unchanged',
        { field: 'execution_request' },
      );
    }
    const record = parseCanonicalRecord(recordBytes, 'IMPORT_RECORD_INVALID', 'execution_record');
    outcome = checkTransferRecord(record, expected, requestDigestValue, profile.recipe);
  }
  if (!updateAttempt(journal, retained, ['active'], { state: 'finished' }, nowMs))
    throw new AgentscmError('INTERNAL', 'the attempt changed inside its transaction');
  const response: JsonObject = {
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
  const seq = (
    journalStatement(journal, 'SELECT coalesce(max(seq), 0) + 1 AS next FROM collector_transfers').get() as {
      next: number;
    }
  ).next;
  journalStatement(
    journal,
    'INSERT INTO collector_transfers (upload_request_id, attempt_id, task_id, transfer_digest, length, envelope, outcome, response, imported_at_ms, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
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
  return response;
}
