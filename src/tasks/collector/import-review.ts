/**
 * A review transfer's import in two halves around its validation-only replay
 * (src/collector/review/import.ts runs the replay between them; docs/collector-transfer.md "Import").
 */
import type { TransferEnvelope } from '../../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import { isReviewDescriptor } from '../../contracts/review/collector-descriptor.js';
import { REVIEW_LIMITS, type ReviewAction } from '../../contracts/review/policy.js';
import { checkRecordAgainstProfile } from '../../contracts/review/profile.js';
import { decodeReviewRecord } from '../../contracts/review/record.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { getCollectorProfile } from '../../native/collector-profiles.js';
import { readRevisionFile } from '../../native/revisions.js';
import type { Store } from '../../native/store-handle.js';
import { deriveSubject, findDerivedTask } from '../derive.js';
import type { GrantAuthorization } from '../grant-guard.js';
import { readAuthority } from '../transition.js';
import { type CollectorAttemptRow } from './attempts.js';
import { refuse, registrationNotCurrent } from './import-refusals.js';
import { claimOf, retainedUpload, withApplicability } from './import-retained.js';
import type { ReplayedReview } from './import-within.js';
import {
  importClaimed,
  importContext,
  verifiedOf,
  type CollectorImportOptions,
  type CollectorImportView,
} from './import.js';
import { isVerifiedTransfer, type VerifiedTransfer } from './verified-transfer.js';

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
 * The first half of a review transfer's import (docs/review.md "Replay (validation only)": the
 * immutable sources and the installed request are rebuilt, then the finite controller runs against
 * a validation-only replay transport and journal): the envelope's signature with the current registration's key
 * and the audience (done once, by readUploadedTransfer, when given bytes), the grant, then —
 * unless this is an exact retry (answered with its retained view) — the claim, the
 * finite-review profile, the task's review step in the current compiled subject, the policy
 * bytes at the exact revision, and the record checked against every pin of the profile
 * (REVIEW_PROFILE_MISMATCH). Changes nothing.
 */
export function prepareReviewImport(
  store: Store,
  upload: Uint8Array | VerifiedTransfer,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): ReviewImportStart {
  const ctx = importContext(store, grant, options);
  const transfer = verifiedOf(store, upload, grant, options);
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
        `the policy the installed plan binds (${action.policy_sha256}) is not the one finite-review profile ` +
          `${d.collector_profile_id} pins (${profile.policy_sha256})`,
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
  store: Store,
  prepared: PreparedReviewImport,
  replayed: ReplayedReview,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): CollectorImportView {
  const { transfer } = prepared;
  if (!isVerifiedTransfer(transfer))
    throw new AgentscmError('INTERNAL', 'a review import needs the transfer prepareReviewImport read');
  if (!transfer.registrationCurrent) throw registrationNotCurrent(transfer.envelope.header.executor.registration_id);
  return importClaimed(importContext(store, grant, options), transfer, prepared.claimed, replayed);
}
