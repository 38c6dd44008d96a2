/**
 * Admission: approval and landing (docs/admission.md; docs/collector-transfer.md for the
 * operator-enrolled collector transfer it rechecks).
 *
 * `admitSubject` is admission's one check, run inside the caller's authority transaction with
 * one journal read snapshot inside it: the subject is derived from the authority and must be
 * current (Change version and revision, context, policy epoch, target, installed requirement),
 * then `decideSubject` (src/tasks/admission/decision.ts) — the one decision `qualification`
 * answers from too — admits it with a receipt or gives the refusal: the task evidence, the live
 * origin grant and current executor registration of every imported task, the retained receipt
 * rebuilt from the retained signed transfers with each signature verified again, every command
 * step's exact successful command (optional or not), every imported task's current collector
 * profile, or a completed server-executed run of the exact compiled plan.
 *
 * Approval runs it in the authority's writer transaction and records the approval of the
 * subject and the receipt. Landing runs it under BEGIN IMMEDIATE on authority.sqlite (the
 * native writer lock), requires the approval of exactly that subject and receipt, requires the
 * target to be at the base the Change's revision descends from, and moves the target and
 * records the landing in the same transaction.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { AgentRef } from '../../contracts/task/common.js';
import {
  findApproval,
  latestApproval,
  recordApproval,
  type Approval,
  type ApprovalSubject,
  type ReceiptKind,
} from '../../native/approvals.js';
import { getChange } from '../../native/changes.js';
import { isAncestor, recordLanding, type Landing } from '../../native/landings.js';
import { resolveRepository } from '../../native/repositories.js';
import { targetSubjectRecipe } from '../../native/requirements.js';
import { resolveContextRef } from '../../native/review-contexts.js';
import { recordServerRunReceipt, type ServerRunReceiptRow } from '../../native/server-run-receipts.js';
import type { Store } from '../../native/store-handle.js';
import { writeTransaction, type Authority } from '../../native/store.js';
import { getTarget } from '../../native/targets.js';
import { pauseAtTestPoint } from '../../native/test-pause.js';
import type { Journal } from '../../workflows/journal.js';
import { trustedLocalGuard } from '../context.js';
import { deriveSubject, type DerivedSubject } from '../derive.js';
import { readJournal } from '../transition.js';
import { completedRunReceipt, decideSubject } from './decision.js';
import { exactSubjectBinding } from './exact-subject.js';
import { soleCurrentContext } from './qualification-local.js';

/**
 * Test pause point (src/native/test-pause.ts): holding the writer lock, the target moved and the landing recorded,
 * before the commit.
 */
export const LAND_PAUSE_POINT = 'admission:land-before-commit';
/** Test pause point: holding the writer lock, the completed run observed and its receipt written, before the commit. */
export const SERVER_RUN_RECEIPT_PAUSE_POINT = 'admission:server-run-receipt-before-commit';

/** The operator of the local data directory: the CLI runs in-process against it, as `agentscm qualification` does. */
const OPERATOR: AgentRef = { owner_id: 'operator', agent_id: 'local' };
/**
 * The workflow task profile the server-executed path derives its subject with (its receipt names no task id, so any
 * profile gives the same receipt).
 */
const SERVER_RUN_PROFILE = 'default';
/** Who approved or landed, as recorded. */
const OPERATOR_NAME = `${OPERATOR.owner_id}/${OPERATOR.agent_id}`;

/** The adapter fields that select a subject. */
export interface AdmissionSelection {
  /** Repository id or name; undefined → the only repository of the store. */
  readonly repository?: string | undefined;
  readonly profile: string;
  readonly target: string;
  readonly change: string;
  readonly nowMs?: number | undefined;
}

/** What admission found: the current subject and the receipt that admits it. */
export interface Admitted {
  readonly derived: DerivedSubject;
  readonly receipt_kind: ReceiptKind;
  readonly receipt_digest: string;
  /** The server-executed run, for a server_run receipt. */
  readonly run_id: string | null;
}

function staleSubject(message: string, change: string): AgentscmError {
  return new AgentscmError('ADMISSION_SUBJECT_STALE', message, {
    hint:
      `run \`agentscm qualification --change ${change}\` for the Change's current subject, collect what it ` +
      `names, then approve it`,
  });
}

/**
 * The current subject of a Change and context, or ADMISSION_SUBJECT_STALE when the context is no longer the current
 * one.
 */
function deriveCurrent(auth: Authority, selection: AdmissionSelection, contextDigest: string): DerivedSubject {
  try {
    return deriveSubject(auth, {
      repository: selection.repository,
      profile: selection.profile,
      target: selection.target,
      change_id: selection.change,
      context_digest: contextDigest,
    });
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'TASK_STALE')
      throw staleSubject(`the subject is no longer current: ${error.message}`, selection.change);
    throw error;
  }
}

/**
 * Admission's checks for the subject of `contextDigest`, in the caller's authority transaction
 * and one journal snapshot inside it (docs/admission.md "What is rechecked, and why"). Returns the
 * receipt that admits the subject, or throws the refusal with its code and next step.
 */
export function admitSubject(
  auth: Authority,
  journal: Journal | null,
  selection: AdmissionSelection,
  contextDigest: string,
  nowMs: number,
): Admitted {
  const derived = deriveCurrent(auth, selection, contextDigest);
  const decision = decideSubject(auth, journal, derived, nowMs, 'signature');
  if (decision.refusal !== null) throw decision.refusal;
  return { derived, ...decision.admitted };
}

/** The approval subject of an admitted subject. */
function approvalSubjectOf(admitted: Admitted): ApprovalSubject {
  const b = admitted.derived.base;
  return {
    repository: b.repository,
    ...exactSubjectBinding(b),
    profile: b.profile,
    receipt_kind: admitted.receipt_kind,
    receipt_digest: admitted.receipt_digest,
  };
}

/**
 * `body` in one journal read snapshot of the caller's Store, as the local operator (journal null
 * when the data directory has none); it opens nothing of its own.
 */
function inOperatorSnapshot<T>(store: Store, selection: AdmissionSelection, body: (journal: Journal | null) => T): T {
  return readJournal(
    {
      store,
      actor: OPERATOR,
      repository: selection.repository,
      profile: selection.profile,
      target: selection.target,
      guard: trustedLocalGuard,
    },
    () => body(null),
    (journal) => body(journal),
  );
}

/** The body in the authority's writer transaction (the store is the caller's, opened for writing). */
function withWriter<T>(store: Store, body: (auth: Authority) => T): T {
  const auth = store.authority();
  return writeTransaction(auth, () => body(auth));
}

export interface ApproveInput extends AdmissionSelection {
  /** Review context digest or unique prefix; undefined → the one context of the Change's current version. */
  readonly context?: string | undefined;
}

export interface ApproveResult {
  readonly approval: Approval;
  /** False when the same subject and receipt were already approved (nothing was written). */
  readonly created: boolean;
  readonly run_id: string | null;
}

/**
 * `agentscm approve`: run admission's checks on the Change's current subject in the authority's
 * writer transaction and record the operator's approval of it and its receipt.
 */
export function approveChange(store: Store, input: ApproveInput): ApproveResult {
  return withWriter(store, (auth) => {
    const repository = resolveRepository(auth, input.repository).id;
    const contextDigest =
      input.context === undefined
        ? soleCurrentContext(auth, repository, input.change, () => targetSubjectRecipe(auth, repository, input.target))
        : resolveContextRef(auth, repository, input.context);
    const selection = { ...input, repository };
    const admitted = inOperatorSnapshot(store, selection, (journal) =>
      admitSubject(auth, journal, selection, contextDigest, input.nowMs ?? Date.now()),
    );
    const { approval, created } = recordApproval(
      auth,
      approvalSubjectOf(admitted),
      OPERATOR_NAME,
      input.nowMs ?? Date.now(),
    );
    return { approval, created, run_id: admitted.run_id };
  });
}

export interface LandResult {
  readonly landing: Landing;
  readonly approval: Approval;
}

/** The target's current revision must be the base the Change's revision descends from. */
function requireBase(auth: Authority, approval: Approval, targetRevision: string): void {
  if (targetRevision === approval.revision) {
    throw new AgentscmError(
      'LAND_BASE_MISMATCH',
      `target ${approval.target} already is at revision ${approval.revision} of Change ${approval.change_id}`,
      {
        hint: 'nothing to land: the target already has this revision; checkpoint new work on it to land more',
      },
    );
  }
  if (!isAncestor(auth, targetRevision, approval.revision)) {
    throw new AgentscmError(
      'LAND_BASE_MISMATCH',
      `Change ${approval.change_id} version ${approval.change_version} (revision ${approval.revision}) does not ` +
        `descend from target ${approval.target}'s current revision ${targetRevision}`,
      {
        hint: `checkpoint the Change on the target's new revision ${targetRevision}, then qualify, approve and land it`,
        details: { target_revision: targetRevision },
      },
    );
  }
}

/**
 * `agentscm land`: under BEGIN IMMEDIATE on the authority (the native writer lock), recheck
 * everything admission checks for the newest approval of the Change, require that approval to
 * bind exactly the current subject and the receipt that admits it now, require the target at the
 * Change's base, then move the target and record the landing in the same transaction.
 */
export function landChange(store: Store, input: AdmissionSelection): LandResult {
  return withWriter(store, (auth) => {
    const repository = resolveRepository(auth, input.repository).id;
    const selection = { ...input, repository };
    const target = getTarget(auth, repository, input.target);
    const change = getChange(auth, repository, input.change);
    const approved = latestApproval(auth, repository, change.id, input.profile, input.target);
    if (approved === null) {
      throw new AgentscmError(
        'APPROVAL_NOT_FOUND',
        `Change ${change.id} has no approval for target ${input.target} and profile ${input.profile}`,
        {
          hint:
            `check \`agentscm qualification --change ${change.id}\`, then \`agentscm approve --change ` +
            `${change.id} --target ${input.target}\``,
        },
      );
    }
    if (approved.change_version !== change.current_version || approved.revision !== change.current_revision) {
      throw staleSubject(
        `the approval names Change ${change.id} version ${approved.change_version}; the Change is at version ` +
          `${change.current_version}`,
        change.id,
      );
    }
    const admitted = inOperatorSnapshot(store, selection, (journal) =>
      admitSubject(auth, journal, selection, approved.context_digest, input.nowMs ?? Date.now()),
    );
    const approval = findApproval(auth, approvalSubjectOf(admitted));
    if (approval === null) {
      throw new AgentscmError(
        'APPROVAL_NOT_FOUND',
        `no approval binds Change ${change.id}'s current subject with the ${admitted.receipt_kind} receipt ` +
          `${admitted.receipt_digest} that admits it now`,
        {
          hint:
            `approve the current subject again: \`agentscm approve --change ${change.id} --target ` +
            `${input.target}\``,
        },
      );
    }
    requireBase(auth, approval, target.revision);
    const landing = recordLanding(auth, approval, target.revision, OPERATOR_NAME, input.nowMs ?? Date.now());
    pauseAtTestPoint(LAND_PAUSE_POINT);
    return { landing, approval };
  });
}

export interface ServerRunReceiptInput {
  readonly repository: string;
  readonly target: string;
  readonly change: string;
  /** The review context the run's command steps are bound to. */
  readonly contextDigest: string;
  readonly runId: string;
  readonly nowMs?: number | undefined;
}

/**
 * The server-executed Stop loop's receipt (docs/admission.md "The server-executed path": the
 * loop copies an exact-subject receipt into the native authority): in one
 * authority writer transaction, with one journal read snapshot inside it, derive the Change's
 * current subject (ADMISSION_SUBJECT_STALE when the context is no longer current), observe that
 * the run completed for exactly that subject's compiled plan and gives a receipt (admission's
 * server-executed check, `completedRunReceipt`), and write the receipt row. The observation and
 * the row commit together: a process killed before the commit leaves neither. Null when the run
 * gives no receipt (nothing is written).
 */
export function recordStopRunReceipt(
  store: Store,
  input: ServerRunReceiptInput,
): { readonly row: ServerRunReceiptRow; readonly created: boolean } | null {
  const nowMs = input.nowMs ?? Date.now();
  return withWriter(store, (auth) => {
    const selection: AdmissionSelection = {
      repository: input.repository,
      profile: SERVER_RUN_PROFILE,
      target: input.target,
      change: input.change,
      nowMs,
    };
    const derived = deriveCurrent(auth, selection, input.contextDigest);
    const receipt = inOperatorSnapshot(store, selection, (journal) =>
      journal === null ? null : completedRunReceipt(auth, journal, derived, input.runId, nowMs),
    );
    if (receipt === null) return null;
    const b = derived.base;
    const recorded = recordServerRunReceipt(auth, {
      receipt_digest: receipt.receipt_digest,
      repository: b.repository,
      ...exactSubjectBinding(b),
      plan_digest: b.plan_digest,
      run_id: receipt.run_id,
      state: receipt.state,
      receipt: receipt.receipt,
      recorded_at_ms: nowMs,
    });
    pauseAtTestPoint(SERVER_RUN_RECEIPT_PAUSE_POINT);
    return recorded;
  });
}
