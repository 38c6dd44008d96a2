/**
 * An upload's exact retry (docs/collector-transfer.md "Import"): the retained answer of an
 * identical earlier upload, after the combined caller/origin authorization, with its
 * applicability read now; and the collector claim an upload request names.
 */
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import { sameAgent } from '../../contracts/task/common.js';
import { requireCurrentCollectorProfile } from '../../native/collector-profiles.js';
import { requireLiveOrigin } from '../../native/grants.js';
import { prepared, type Authority } from '../../native/store.js';
import type { Journal } from '../../workflows/journal.js';
import { findTaskWithAttempt, updateAttempt, type RetainedAttempt } from '../attempt-rows.js';
import type { TaskContext } from '../context.js';
import { requireCurrentSubject } from '../derive.js';
import { findRetainedTask } from '../journal-rows.js';
import { readAuthority, readJournal, runTransition, type TransitionScope } from '../transition.js';
import { findCollectorAttemptByUpload, type CollectorAttemptRow } from './attempts.js';
import { refuse, uploadUnknown } from './import-refusals.js';
import type { TransferAnswer } from './import-within.js';
import { strictJsonParse } from './json.js';
import { type VerifiedTransfer } from './verified-transfer.js';

/** Whether a retained answer still applies now: each of the three checks withApplicability reads. */
export type Applicability = {
  readonly subject_current: boolean;
  readonly registration_current: boolean;
  readonly origin_current: boolean;
};

/** A transfer's answer with its applicability read now, reported beside it. */
export type ApplicableAnswer = TransferAnswer & {
  readonly currently_applicable: boolean;
  readonly applicability: Applicability;
};

/**
 * The guard, then the exact-retry lookup: the retained answer of an identical upload, or null.
 * The transfer row is read from the authority, its claim from the journal; a retained transfer
 * whose attempt is still active (a crash between the import's authority commit and its journal
 * commit) has that attempt finished now, in a transition of its own (settleRetained).
 */
export function retainedUpload(ctx: TaskContext, transfer: VerifiedTransfer): TransferAnswer | null {
  const id = transfer.envelope.header.upload_request_id;
  const answer = ctx.guard(ctx.actor, 'collector_upload', () => {
    const row = readAuthority(ctx, (auth) => retainedRow(auth, id));
    if (row === null) return null;
    return readJournal(
      ctx,
      () => {
        throw claimMissing(id);
      },
      (journal) => answerOf(journal, ctx, id, transfer.digest, row),
      true,
    );
  });
  if (answer === null) return null;
  const active = readJournal(
    ctx,
    () => false,
    (journal) => activeAttemptOf(journal, answer) !== null,
  );
  if (active)
    runTransition(
      ctx,
      'collector_upload',
      (scope) => settleRetained(scope, answer),
      () => {
        throw claimMissing(id);
      },
    );
  return answer;
}

/** The attempt a retained answer names, when the journal still holds it active; else null. */
function activeAttemptOf(journal: Journal, answer: TransferAnswer): RetainedAttempt | null {
  const found = findTaskWithAttempt(journal, answer.task_id, answer.attempt_id);
  const attempt = found?.attempt?.() ?? null;
  return attempt !== null && attempt.state === 'active' ? attempt : null;
}

/**
 * Finish the attempt of a retained transfer that is still active: the import's journal half,
 * lost to a crash after its authority commit (docs/collector-transfer.md "Where transfers and
 * receipts live"). Inside a transition; idempotent (an attempt no longer active is left as is).
 */
export function settleRetained(scope: TransitionScope, answer: TransferAnswer): void {
  const attempt = activeAttemptOf(scope.journal, answer);
  if (attempt !== null) updateAttempt(scope.journal, attempt, ['active'], { state: 'finished' }, scope.nowMs);
}

function claimMissing(uploadRequestId: string): AgentscmError {
  return new AgentscmError(
    'TASK_JOURNAL_INCONSISTENT',
    `the retained transfer of upload request ${uploadRequestId} has no collector claim`,
  );
}

function retainedRow(auth: Authority, uploadRequestId: string): RetainedTransfer | null {
  const row = prepared(
    auth,
    'SELECT transfer_digest, response FROM collector_transfers WHERE upload_request_id = ?',
  ).get(uploadRequestId) as RetainedTransfer | undefined;
  return row ?? null;
}

/** The collector claim the upload request names (IMPORT_UPLOAD_UNKNOWN when none). */
export function claimOf(ctx: TaskContext, transfer: VerifiedTransfer): CollectorAttemptRow {
  const h = transfer.envelope.header;
  const claimed = readJournal(
    ctx,
    () => null,
    (journal) => findCollectorAttemptByUpload(journal, h.upload_request_id),
  );
  if (claimed === null) throw uploadUnknown(h);
  return claimed;
}

interface RetainedTransfer {
  transfer_digest: string;
  response: Buffer;
}

/**
 * The caller half of the combined caller/origin authorization of a retained upload
 * (docs/collector-transfer.md "Import": an exact committed upload retry is looked up after
 * current combined caller/origin authorization): the guard has authenticated the caller's grant
 * again; the retained upload is answered only on the repository of that grant and only to the
 * actor whose grant claimed it — the same refusals as a first upload by anyone else. Whether the
 * originating grant itself is still live is the answer's applicability (`origin_current`), read
 * now beside it.
 */
function authorizeRetainedUpload(ctx: TaskContext, claim: CollectorAttemptRow): void {
  const d = claim.descriptor;
  if (d.repository_id !== ctx.origin?.repository) {
    refuse(
      'IMPORT_REPOSITORY_MISMATCH',
      `upload request ${d.upload_request_id} belongs to repository ${d.repository_id}; the uploading grant is ` +
        `for ${ctx.origin?.repository ?? 'no repository'}`,
      'upload with a grant of the repository that claimed the task',
      { field: 'repository_id' },
    );
  }
  if (!sameAgent({ owner_id: claim.origin.owner_id, agent_id: claim.origin.agent_id }, ctx.actor)) {
    refuse(
      'IMPORT_ORIGIN_MISMATCH',
      `upload request ${d.upload_request_id} was claimed by ${claim.origin.owner_id}/${claim.origin.agent_id}, ` +
        `not by the uploading actor ${ctx.actor.owner_id}/${ctx.actor.agent_id}`,
      'upload (or retry) as the actor whose grant claimed the task',
      { field: 'origin' },
    );
  }
}

/**
 * The historical answer of an identical earlier upload, after the caller is authorized for the
 * claim it belongs to; other bytes under the same upload request conflict.
 */
export function retainedAnswer(
  scope: TransitionScope,
  ctx: TaskContext,
  uploadRequestId: string,
  digest: string,
): TransferAnswer | null {
  const row = retainedRow(scope.auth, uploadRequestId);
  if (row === null) return null;
  const answer = answerOf(scope.journal, ctx, uploadRequestId, digest, row);
  settleRetained(scope, answer);
  return answer;
}

function answerOf(
  journal: Journal,
  ctx: TaskContext,
  uploadRequestId: string,
  digest: string,
  row: RetainedTransfer,
): TransferAnswer {
  const claim = findCollectorAttemptByUpload(journal, uploadRequestId);
  if (claim === null) throw claimMissing(uploadRequestId);
  authorizeRetainedUpload(ctx, claim);
  if (row.transfer_digest !== digest) {
    refuse(
      'IMPORT_UPLOAD_CONFLICT',
      `upload request ${uploadRequestId} already imported a transfer with SHA-256 ${row.transfer_digest}, ` +
        `not ${digest}`,
      'retry an upload only with its identical retained bytes (agent-task retry-upload)',
      {
        upload_request_id: uploadRequestId,
        transfer_digest: row.transfer_digest,
      },
    );
  }
  const value = strictJsonParse(row.response);
  // The stored answer is the one importWithin wrote (its own bytes, read back as they were).
  return { ...(value as TransferAnswer), status: 'retained' };
}

/**
 * The retained view with its applicability read now, reported beside it: whether the task's
 * subject is still current, the profile's registration still current and the originating grant
 * still live at its claimed generation (not revoked, not rotated). A stale answer is still the
 * historical answer of that upload; `currently_applicable` is true only when all three hold.
 */
export function withApplicability(ctx: TaskContext, answer: TransferAnswer): ApplicableAnswer {
  const retained = readJournal(
    ctx,
    () => null,
    (journal) => ({
      task: findRetainedTask(journal, answer.task_id),
      claim: findCollectorAttemptByUpload(journal, answer.upload_request_id),
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
    const registrationCurrent = holds(() => requireCurrentCollectorProfile(auth, answer.collector_profile_id));
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
