/**
 * Receipts v2 and `collector_finalize` (docs/wire.md "Receipt v2"; docs/collector-transfer.md
 * "Receipts and collector_finalize"). A subject's receipt is written when its
 * compiled graph completes with imported command tasks: every required task passed, every
 * command task has a validated import, native source_paths results are recomputed from the
 * immutable revision and capabilities assessed now. It names every transfer, task, attempt,
 * fence, registration epoch/key/profile and origin. The receipt is written in its own journal
 * transaction after the import's, so a crash between the two leaves a retained transfer without
 * a receipt (nonpassing), and `collector_finalize` writes it later from the retained transfers,
 * under current authorization, without running anything: at most 32 transfers, one at a time,
 * each stored length checked against 16 MiB before its bytes are read.
 */
import { collectorFinalizeRequestDecoder, type CollectorFinalizeRequest } from '../../contracts/collector/requests.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import {
  checkReceipt,
  encodeReceiptV2,
  MAX_RECEIPT_TASKS,
  receiptOutcomeOf,
  receiptV2Digest,
  type ReceiptTask,
  type WorkflowReceiptV2,
} from '../../contracts/receipt/receipt-v2.js';
import { hexToBytes } from '../../contracts/task/common.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { authorityId } from '../../native/authority-identity.js';
import { getRegistration } from '../../native/executor-registry.js';
import { requireLiveOrigin } from '../../native/grants.js';
import { prepared, type Authority } from '../../native/store.js';
import type { Journal } from '../../workflows/journal.js';
import { assessCapability } from '../../workflows/require-capability.js';
import { checkSourcePaths } from '../../workflows/source-paths.js';
import type { TaskContext } from '../context.js';
import { requireCurrentSubject, type DerivedSubject } from '../derive.js';
import { requireActor } from '../operations/checks.js';
import { deriveCurrent } from '../operations/lookups.js';
import { runTransition, type TransitionScope } from '../transition.js';
import { findCollectorAttempt } from './attempts.js';
import { commitAuthority } from './authority-commit.js';
import { readRetainedEnvelope } from './retained-envelope.js';
import { findTransferOfTask } from './transfers.js';
import { reverifyRetainedEnvelope } from './verified-transfer.js';

// The row readers live in collector-transfers.ts (no dependency back on the operations); they
// are re-exported here for callers that read receipts and imports together.
export { findTransferOfAttempt, findTransferOfTask } from './transfers.js';
export type { RetainedTransferRow } from './transfers.js';
// The envelope reader lives in retained-envelope.ts, so that views.ts can read envelopes without
// depending on this module (which depends on operations.ts, which depends on views.ts).
export { readRetainedEnvelope } from './retained-envelope.js';

function sourcePathsDigest(
  auth: Authority,
  derived: DerivedSubject,
  expectations: Parameters<typeof checkSourcePaths>[3],
): string | null {
  const result = checkSourcePaths(auth, derived.base.repository, derived.base.revision, expectations);
  if (result.state !== 'succeeded') return null;
  return sha256Hex(encodeCanonical({ state: result.state, observations: result.observations as unknown as JsonValue }));
}

/** Why a subject has no receipt yet, or the receipt its retained imports give. */
export type ReceiptBuild = { readonly receipt: WorkflowReceiptV2 } | { readonly incomplete: string };

/**
 * Build the receipt of a subject from what the journal retains: null reasons name the first task
 * that keeps the graph from completing. `verify` re-reads each imported envelope (finalize).
 */
export function buildReceipt(
  auth: Authority,
  journal: Journal,
  derived: DerivedSubject,
  verify: boolean,
): ReceiptBuild {
  const rows: ReceiptTask[] = [];
  let imported = 0;
  if (derived.tasks.length > MAX_RECEIPT_TASKS)
    return { incomplete: `the plan has ${derived.tasks.length} steps, more than ${MAX_RECEIPT_TASKS}` };
  for (const entry of derived.tasks) {
    const base = {
      task_id: entry.task.task_id,
      task_digest: entry.digest,
      step_id: entry.task.subject.step_id,
      required: entry.task.required,
    };
    const action = entry.step.action;
    if (action.kind === 'source_paths') {
      const digest = sourcePathsDigest(auth, derived, action.expectations);
      rows.push(
        digest === null ? { ...base, outcome: 'failed' } : { ...base, outcome: 'passed', result_digest: digest },
      );
    } else if (action.kind === 'require_capability') {
      rows.push({ ...base, outcome: assessCapability(action.capability).available ? 'passed' : 'unavailable' });
    } else {
      const transfer = findTransferOfTask(auth, entry.task.task_id);
      if (transfer === null)
        return {
          incomplete: `${action.kind} task ${entry.task.task_id} (step "${base.step_id}") has no imported transfer`,
        };
      const claim = findCollectorAttempt(journal, transfer.attempt_id);
      if (claim === null)
        throw new AgentscmError(
          'TASK_JOURNAL_INCONSISTENT',
          `imported transfer ${transfer.upload_request_id} has no collector claim`,
        );
      // The originating grant stays authorizing through finalization (docs/grants.md "Task
      // operations under a grant"): revoked or rotated since the claim, no receipt.
      try {
        requireLiveOrigin(auth, claim.origin);
      } catch (error) {
        if (isAgentscmError(error) && error.code === 'GRANT_NOT_LIVE')
          return {
            incomplete:
              `the originating grant ${claim.origin.grant_id} of task ${entry.task.task_id}'s transfer ` +
              `is no longer live`,
          };
        throw error;
      }
      // The executor registration the transfer was signed under is rechecked here too, inside
      // the receipt's own transaction (the import checked it in an earlier one): revoked or
      // superseded by a re-enrollment since, no receipt names its transfer.
      const d = claim.descriptor;
      const registration = getRegistration(auth, d.executor.registration_id);
      if (
        !registration.current ||
        registration.registration_epoch !== d.executor.registration_epoch ||
        registration.verification_key_id !== d.executor.verification_key_id
      ) {
        return {
          incomplete:
            `the registration ${registration.registration_id} (epoch ${d.executor.registration_epoch}) ` +
            `of task ${entry.task.task_id}'s transfer is no longer current`,
        };
      }
      if (verify) {
        // The retained bytes must still verify under the registration's key (read one transfer
        // at a time, length checked first). By design, and only from retained transfers
        // (collector_finalize, admission's rebuild): an upload writes its receipt with verify
        // false, so its own envelope is parsed and its signature checked once, by the import
        // (readVerifiedTransfer), and no row here reads an envelope at all — every field of a
        // row comes from the claim and the transfer row, and an earlier upload's envelope was
        // verified by its own import (docs/collector-transfer.md "Receipts and collector_finalize").
        reverifyRetainedEnvelope(readRetainedEnvelope(auth, transfer), hexToBytes(registration.public_key));
      }
      imported++;
      // Every imported task's row names its transfer, whatever its outcome (docs/collector-transfer.md
      // "Receipt v2": the receipt names every transfer): an optional task that did not pass is an omission
      // that still says which signed record made it one.
      rows.push({
        ...base,
        outcome: receiptOutcomeOf(transfer.outcome),
        attempt_id: d.attempt.attempt_id,
        attempt_digest: d.attempt.attempt_digest,
        fence: d.attempt.fence,
        transfer_digest: transfer.transfer_digest,
        collector_profile_id: d.collector_profile_id,
        registration_id: d.executor.registration_id,
        registration_epoch: d.executor.registration_epoch,
        verification_key_id: d.executor.verification_key_id,
        origin: claim.origin,
      });
    }
    const last = rows[rows.length - 1] as ReceiptTask;
    if (last.required && last.outcome !== 'passed')
      return { incomplete: `required task ${last.task_id} (step "${last.step_id}") is ${last.outcome}` };
  }
  if (imported === 0) return { incomplete: 'no command or review task of the subject was imported' };
  const omissions = rows.some((row) => row.outcome !== 'passed');
  const { base } = derived;
  return {
    receipt: checkReceipt({
      version: 2,
      authority_id: authorityId(auth),
      repository_id: base.repository,
      workflow_profile: base.profile,
      subject: {
        change_id: base.change_id,
        change_version: base.change_version,
        revision: base.revision,
        context_digest: base.context_digest,
        policy_epoch: base.policy_epoch,
        target: base.target,
        requirement_digest: base.requirement_digest,
        plan_digest: base.plan_digest,
      },
      state: omissions ? 'completed_with_omissions' : 'completed',
      tasks: rows,
    }),
  };
}

/** The retained receipt of a subject, or null. */
export function findReceipt(
  auth: Authority,
  derived: DerivedSubject,
): { readonly receipt_digest: string; readonly receipt: Buffer } | null {
  const b = derived.base;
  const row = prepared(
    auth,
    'SELECT receipt_digest, receipt FROM collector_receipts WHERE repository = ? AND profile = ? AND target = ? ' +
      'AND change_id = ? AND context_digest = ? AND plan_digest = ?',
  ).get(b.repository, b.profile, b.target, b.change_id, b.context_digest, b.plan_digest) as
    { receipt_digest: string; receipt: Buffer } | undefined;
  return row ?? null;
}

/**
 * What writing a subject's receipt did: wrote it, found it already retained, or found the graph
 * incomplete (why). An object type, so that an answer embeds it as a JSON value.
 */
export type ReceiptWriteView =
  | { readonly status: 'written'; readonly receipt_digest: string; readonly state: string }
  | { readonly status: 'retained'; readonly receipt_digest: string }
  | { readonly status: 'incomplete'; readonly reason: string };

/** Write the subject's receipt inside a transition when its graph is complete; returns its view. */
export function writeReceiptIfComplete(
  scope: TransitionScope,
  derived: DerivedSubject,
  verify: boolean,
): ReceiptWriteView {
  // The subject compiled before the transaction is still current through the reserved connection.
  requireCurrentSubject(scope.auth, derived.base);
  const existing = findReceipt(scope.auth, derived);
  if (existing !== null) return { status: 'retained', receipt_digest: existing.receipt_digest };
  const built = buildReceipt(scope.auth, scope.journal, derived, verify);
  if ('incomplete' in built) return { status: 'incomplete', reason: built.incomplete };
  const bytes = encodeReceiptV2(built.receipt);
  const digest = receiptV2Digest(built.receipt);
  const b = derived.base;
  prepared(
    scope.auth,
    'INSERT INTO collector_receipts (receipt_digest, repository, profile, target, change_id, context_digest, ' +
      'plan_digest, receipt, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(digest, b.repository, b.profile, b.target, b.change_id, b.context_digest, b.plan_digest, bytes, scope.nowMs);
  // The receipt is an authority row: it commits with the writer reservation, before the
  // transition's (empty) journal commit (docs/collector-transfer.md "Where transfers and receipts live").
  commitAuthority(scope);
  return { status: 'written', receipt_digest: digest, state: built.receipt.state };
}

export { collectorFinalizeRequestDecoder };
export type { CollectorFinalizeRequest };

/**
 * `collector_finalize` (reconcile_collector_finalization): write the receipt of the context's
 * subject from its retained transfers, verifying each retained envelope's signature again with
 * its registration key; runs nothing. Answers {status: written | retained | incomplete, ...}.
 */
export function collectorFinalizeOperation(ctx: TaskContext, request: CollectorFinalizeRequest): JsonValue {
  requireActor(ctx, request.agent);
  const derived = deriveCurrent(ctx);
  return runTransition(
    ctx,
    'collector_finalize',
    (scope) => writeReceiptIfComplete(scope, derived, true),
    () => {
      throw new AgentscmError(
        'WORKFLOW_JOURNAL_NOT_INITIALIZED',
        `the workflow journal does not exist in ${ctx.store.dataDir}; nothing was created`,
        { hint: 'no task was ever claimed in this data directory' },
      );
    },
  );
}
