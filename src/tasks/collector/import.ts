/**
 * Authority-side import of a collector transfer (docs/wire.md "Collector transfer envelope v1";
 * docs/collector-transfer.md "Import"). One core
 * function that every upload path calls: `agent-task collect` and `agent-task upload` into the
 * local authority, and the hub's upload route.
 */
import { isAgentscmError } from '../../contracts/errors.js';
import type { Store } from '../../native/store-handle.js';
import type { TaskContext } from '../context.js';
import { deriveSubject } from '../derive.js';
import type { GrantAuthorization } from '../grant-guard.js';
import { readAuthority, runTransition } from '../transition.js';
import { type CollectorAttemptRow } from './attempts.js';
import { registrationNotCurrent, uploadUnknown } from './import-refusals.js';
import {
  claimOf,
  retainedAnswer,
  retainedUpload,
  withApplicability,
  type ApplicableAnswer,
} from './import-retained.js';
import { importWithin, type ReplayedReview, type TransferAnswer } from './import-within.js';
import { writeReceiptIfComplete, type ReceiptWriteView } from './receipts.js';
import { isVerifiedTransfer, readVerifiedTransfer, type VerifiedTransfer } from './verified-transfer.js';

export type { ReplayedReview } from './import-within.js';

export interface CollectorImportOptions {
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: (() => number) | undefined;
}

/**
 * The answer of an import (and of its exact retry): the transfer's answer (TransferAnswer:
 * `status: "imported" | "retained"`, upload_request_id, transfer_digest, ..., outcome,
 * record_digest), then for a fresh import the receipt write and `currently_applicable: true`, or
 * for a retained one `currently_applicable` and `applicability` read now. `retained` is the
 * historical view of an identical earlier upload; its applicability is reported separately.
 */
export type CollectorImportView =
  (TransferAnswer & { readonly receipt: ReceiptWriteView; readonly currently_applicable: true }) | ApplicableAnswer;

/**
 * Import one signed transfer envelope as the grant's actor into the authority of `store` (opened
 * for writing by the root).
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
export function importContext(store: Store, grant: GrantAuthorization, options: CollectorImportOptions): TaskContext {
  return {
    store,
    actor: grant.actor,
    repository: grant.repository,
    profile: 'default',
    target: 'main',
    guard: grant.guard,
    origin: grant.origin,
    now: options.now,
  };
}

/**
 * Read and verify an uploaded envelope once, against the authority of `store` (see
 * verified-transfer.ts): the one parse and the one signature check of an upload.
 */
export function readUploadedTransfer(
  store: Store,
  envelopeBytes: Uint8Array,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): VerifiedTransfer {
  const ctx = importContext(store, grant, options);
  return readVerifiedTransfer(envelopeBytes, (body) => readAuthority(ctx, body));
}

export function verifiedOf(
  store: Store,
  upload: Uint8Array | VerifiedTransfer,
  grant: GrantAuthorization,
  options: CollectorImportOptions,
): VerifiedTransfer {
  return isVerifiedTransfer(upload) ? upload : readUploadedTransfer(store, upload, grant, options);
}

/**
 * Import one upload: its bytes (read and verified here) or the VerifiedTransfer the caller read
 * with readUploadedTransfer (then nothing is parsed or verified again).
 */
export function importCollectorTransfer(
  store: Store,
  upload: Uint8Array | VerifiedTransfer,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): CollectorImportView {
  const ctx = importContext(store, grant, options);
  // 1. The envelope itself: size, magic, header, framing and record digests (pure), then the
  //    signature with the CURRENT registration's key and the audience.
  const transfer = verifiedOf(store, upload, grant, options);
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

/** Compile the claim's subject, import under the native writer reservation, then the receipt. */
export function importClaimed(
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
      retainedAnswer(scope, ctx, envelope.header.upload_request_id, transfer.digest) ??
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
  let receipt: ReceiptWriteView;
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
