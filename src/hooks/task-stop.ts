/**
 * The agent-owned Stop hook, `skill-workflow task-stop` (Claude Code) and `task-codex-stop` (Codex)
 * (docs/stop-hooks.md "Agent-owned mode"). Inside the frame of every Stop hook (stop-guard.ts:
 * payload, counter, output) it:
 *
 * 1. reads the workspace read-only (no migration, no journal-mode change; a schema that is not
 *    current blocks) and the local Change subject — current version, revision, the review
 *    context of that version, the digest of the requirement installed for the hook's target (the
 *    one the hub profile pins: `--target`, default `main`) — from the authority opened
 *    existing-only and read-only;
 * 2. asks the hub's `qualification` for that subject with the token file (30 s);
 * 3. reads the workspace and the subject again.
 *
 * It passes only if the answer is qualified and current for exactly the local revision, both
 * workspace reads are clean with the same base and generation, the subject did not move, and the
 * workspace base is that revision. Everything else blocks, with typed failures, a fixed
 * next_action sentence per next.operation and `next` (checkpoint whenever the local bytes are not
 * the qualified ones). Failures are fixed categories without paths or server text. The hook
 * never claims, collects, uploads, finalizes, reconciles or checkpoints, and writes nothing
 * (the counter is the frame's).
 */
import { resolve } from 'node:path';

import { isAgentscmError, type ErrorCode } from '../contracts/errors.js';
import type { QualificationAnswer } from '../contracts/task/qualification.js';
import type { Subject } from '../contracts/task/subject.js';
import { getChange } from '../native/changes.js';
import { collectorCommands, shellCommandLine } from '../native/collector-commands.js';
import { readTokenFile } from '../native/grant-token-file.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { getTargetRequirement, targetSubjectRecipe } from '../native/requirements.js';
import { soleCurrentContext } from '../native/review-contexts.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction } from '../native/store.js';
import { readWorkspaceStatus, type WorkspaceStatus } from '../workspace/status.js';
import { requestQualification } from './qualification-client.js';
import type { StopDecision, StopFailure, StopNext, StopNextOperation } from './stop/output.js';
import { DEFAULT_TASK_STOP_TARGET } from './stop/target.js';

/** The fixed sentence of each next.operation (docs/stop-hooks.md "Block causes and feedback"). */
export const TASK_STOP_NEXT_ACTIONS: Readonly<Record<StopNextOperation, string>> = {
  collector_claim:
    'Run the two command lines above on this machine, as printed: `agentscm agent-task claim` (collector_claim under ' +
    'the profile named in next) writes the descriptor, `agentscm agent-task collect` runs the check with the ' +
    "operator's collector key and state directory; then finish again.",
  reconcile:
    'Reconcile the unresolved attempt of the task named in next (reconcile), ask qualification and follow its ' +
    'next, then finish again.',
  collector_finalize: 'Finalize the collected evidence with collector_finalize, ask qualification, then finish again.',
  checkpoint:
    'Checkpoint the workspace onto this Change (the command line above; it creates the review context of the new ' +
    "version itself), then follow qualification's next and finish again.",
  none:
    'No task operation moves this subject forward now: a failed check needs an edit and a new checkpoint, an ' +
    'attempt in progress needs its collector to finish, and a store, token or service failure needs the ' +
    'operator; then finish again.',
};

/** What the hook's own failures say (fixed text: no path, no server text). */
const CATEGORY_LINES = {
  workspace_unavailable:
    'the workspace cannot be read (missing, bound to another data directory, or its schema is not current)',
  local_store_unavailable:
    "the local store cannot give the Change's subject (missing store, several review contexts of its current " +
    'version, or no installed requirement)',
  subject_missing: 'the Change has no checkpointed version yet, or its current version has no review context',
  token_unavailable: 'the token file cannot be read (missing, not a single token, or readable by group or others)',
  workspace_not_clean:
    'the workspace has edits that are not checkpointed (or a pending operation, or an incomplete scan)',
  workspace_changed: 'the workspace changed while qualification was asked',
  subject_changed: "the Change's subject changed while qualification was asked",
  base_mismatch: "the workspace base is not the revision of the Change's current version",
  service_request_failed:
    'the qualification request to the service failed (offline, unreachable, too slow, or refused)',
  token_rejected: 'the service rejected the token (revoked, rotated, or not for this repository)',
  malformed_response: 'the service answered something that is not a valid qualification answer for this subject',
} as const;
type Category = keyof typeof CATEGORY_LINES;

export interface TaskStopInput {
  /** The command's Store ('read'): the subject is read from its authority, never written. */
  readonly store: Store;
  readonly workspace: string;
  readonly change: string;
  readonly endpoint: string;
  /** `OWNER/NAME` of the hub's routes. */
  readonly repository: string;
  readonly profile: string;
  readonly tokenFile: string;
  /** The target whose installed requirement is part of the local subject (the hub profile's; default `main`). */
  readonly target?: string;
  readonly timeoutMs?: number;
}

/** The local Change subject the hook asks about and compares after the call. */
export interface LocalSubject extends Subject {
  readonly repository: string;
  /** The digest of the requirement installed for the hook's target. */
  readonly requirement_digest: string;
}

/** Read the Change's subject in one read snapshot of the store's authority. */
export function readLocalSubject(
  store: Store,
  repository: string,
  changeId: string,
  target: string = DEFAULT_TASK_STOP_TARGET,
): LocalSubject {
  const auth = store.authority();
  return readTransaction(auth, () => {
    const change = getChange(auth, repository, changeId);
    return {
      repository,
      change_id: change.id,
      change_version: change.current_version,
      revision: change.current_revision,
      context_digest: soleCurrentContext(auth, repository, change.id, () =>
        targetSubjectRecipe(auth, repository, target),
      ),
      policy_epoch: currentPolicyEpoch(auth, repository),
      requirement_digest: getTargetRequirement(auth, repository, target).requirement_digest,
    };
  });
}

function sameSubject(a: LocalSubject, b: LocalSubject): boolean {
  return (
    a.repository === b.repository &&
    a.change_id === b.change_id &&
    a.change_version === b.change_version &&
    a.revision === b.revision &&
    a.context_digest === b.context_digest &&
    a.policy_epoch === b.policy_epoch &&
    a.requirement_digest === b.requirement_digest
  );
}

function sameWorkspace(a: WorkspaceStatus, b: WorkspaceStatus): boolean {
  return a.ready && b.ready && a.base_revision === b.base_revision && a.generation === b.generation;
}

function block(
  category: Category,
  next: StopNext,
  failures: readonly StopFailure[] = [{ task_id: 'stop_hook', code: category }],
): StopDecision {
  return {
    decision: 'block',
    feedback: {
      lines: [`agentscm Stop hook: ${CATEGORY_LINES[category]}.`],
      failures,
      next_action: TASK_STOP_NEXT_ACTIONS[next.operation],
      next,
    },
  };
}

const CHECKPOINT: StopNext = { operation: 'checkpoint' };
const NONE: StopNext = { operation: 'none' };

/**
 * A Change not checkpointed yet, or a version without its review context: what a checkpoint (and context create) makes.
 */
const SUBJECT_MISSING: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['CHANGE_NOT_FOUND', 'CONTEXT_NOT_FOUND']);

/**
 * The block when the subject cannot be read before the call: edits first, then a subject still to make, then the store.
 */
function subjectUnreadable(error: unknown, workspace: WorkspaceStatus): StopDecision {
  if (!workspace.ready) return block('workspace_not_clean', CHECKPOINT);
  if (isAgentscmError(error) && SUBJECT_MISSING.has(error.code)) return block('subject_missing', CHECKPOINT);
  return block('local_store_unavailable', NONE);
}

/** The category of a failed service call (anything unexpected counts as a failed request). */
function callCategory(error: unknown): Category {
  const code: ErrorCode | null = isAgentscmError(error) ? error.code : null;
  if (code === 'HOOK_TOKEN_REJECTED') return 'token_rejected';
  if (code === 'HOOK_ANSWER_MALFORMED') return 'malformed_response';
  return 'service_request_failed';
}

/** At most this many lines and bytes of one failure's output tail reach the agent. */
export const STOP_TAIL_MAX_LINES = 40;
export const STOP_TAIL_MAX_BYTES = 4096;

/** The last lines of one stream, at most `lines` lines and `bytes` UTF-8 bytes (whole characters). */
function boundedTail(text: string, lines: number, bytes: number): string[] {
  const all = text.replace(/\n$/, '').split('\n');
  const kept: string[] = [];
  let used = 0;
  for (let i = all.length - 1; i >= 0 && kept.length < lines; i--) {
    const line = all[i] ?? '';
    const size = Buffer.byteLength(line, 'utf8') + 1;
    if (used + size > bytes) break;
    used += size;
    kept.unshift(line);
  }
  return kept;
}

/**
 * A failure's command output tail, when the answer carries one (`output_tail` {stdout, stderr}): at most
 * STOP_TAIL_MAX_LINES lines and STOP_TAIL_MAX_BYTES bytes for the failure, stderr last; each line is escaped by the
 * renderer like every human line.
 */
export function outputTailLines(failure: QualificationAnswer['failures'][number]): string[] {
  const tail = (failure as { output_tail?: unknown }).output_tail;
  if (typeof tail !== 'object' || tail === null) return [];
  const streams = tail as { stdout?: unknown; stderr?: unknown };
  const stdout = typeof streams.stdout === 'string' ? streams.stdout : '';
  const stderr = typeof streams.stderr === 'string' ? streams.stderr : '';
  const errLines = stderr === '' ? [] : boundedTail(stderr, STOP_TAIL_MAX_LINES, STOP_TAIL_MAX_BYTES);
  const errBytes = errLines.reduce((n, line) => n + Buffer.byteLength(line, 'utf8') + 1, 0);
  const outLines =
    stdout === '' ? [] : boundedTail(stdout, STOP_TAIL_MAX_LINES - errLines.length, STOP_TAIL_MAX_BYTES - errBytes);
  const lines: string[] = [];
  if (outLines.length > 0)
    lines.push(`  stdout of task ${failure.task_id} (last lines):`, ...outLines.map((l) => `    ${l}`));
  if (errLines.length > 0)
    lines.push(`  stderr of task ${failure.task_id} (last lines):`, ...errLines.map((l) => `    ${l}`));
  return lines;
}

function answerBlock(answer: QualificationAnswer): StopDecision {
  const lines = [
    answer.subject_current
      ? `agentscm Stop hook: revision ${answer.revision} is not qualified yet (${answer.failures.length} ` +
        `failure${answer.failures.length === 1 ? '' : 's'}).`
      : `agentscm Stop hook: the subject of revision ${answer.revision} is superseded.`,
    ...answer.tasks.map(
      (task) => `task ${task.task_id} (step ${task.step_id}${task.required ? ', required' : ''}): ${task.state}`,
    ),
    // Every failure by its code, known to this hook or not (a newer hub may add codes; the decoder
    // has checked each is id-shaped, so it is printed as it came).
    ...answer.failures.flatMap((failure) => [
      `failure of task ${failure.task_id}: ${failure.code}`,
      ...outputTailLines(failure),
    ]),
  ];
  return {
    decision: 'block',
    feedback: {
      lines,
      failures: answer.failures,
      next_action: TASK_STOP_NEXT_ACTIONS[answer.next.operation],
      next: answer.next,
    },
  };
}

/**
 * The exact command lines of a block's next (docs/stop-hooks.md "Block causes and feedback"), each `$ agentscm …`
 * with every argument filled in: the checkpoint of this workspace onto the Change, or the collector claim and collect
 * of the task named in next, with the collector the operator set up (`agent-task collector add`). None when the
 * store cannot give them (the sentence still says what to do).
 */
function commandLines(input: TaskStopInput, next: StopNext): string[] {
  const target = input.target ?? DEFAULT_TASK_STOP_TARGET;
  const dataDir = resolve(input.store.dataDir);
  if (next.operation === 'checkpoint') {
    return [
      shellCommandLine([
        'agentscm',
        '--data-dir',
        dataDir,
        'checkpoint',
        '--change',
        input.change,
        '--workspace',
        resolve(input.workspace),
        ...(target === DEFAULT_TASK_STOP_TARGET ? [] : ['--target', target]),
      ]),
    ];
  }
  const taskId = next.task_id;
  const profileId = next.collector_profile_id;
  if (next.operation !== 'collector_claim' || taskId === undefined || profileId === undefined) return [];
  try {
    const repository = readWorkspaceStatus(input.store, { workspace: input.workspace }).repository;
    const auth = input.store.authority();
    return readTransaction(auth, () => {
      const subject = readLocalSubject(input.store, repository, input.change, target);
      const argvs = collectorCommands(auth, {
        data_dir: dataDir,
        collector_profile_id: profileId,
        change_id: subject.change_id,
        context_digest: subject.context_digest,
        task_id: taskId,
        target,
        token_file: input.tokenFile,
      });
      return argvs === null ? [] : argvs.map(shellCommandLine);
    });
  } catch {
    return [];
  }
}

/** One agent-owned Stop (see the module comment): pass only for qualified, current, clean, exact bytes. */
export async function runTaskStop(input: TaskStopInput): Promise<StopDecision> {
  const decision = await decideTaskStop(input);
  if (decision.decision === 'pass') return decision;
  const next = decision.feedback.next;
  const lines = commandLines(input, next);
  const named =
    next.operation === 'collector_claim' && next.collector_profile_id !== undefined
      ? [`next: collector_claim of task ${next.task_id ?? ''} under collector profile ${next.collector_profile_id}`]
      : [];
  if (lines.length === 0 && named.length === 0) return decision;
  return {
    decision: 'block',
    feedback: {
      ...decision.feedback,
      lines: [...decision.feedback.lines, ...named, ...lines.map((line) => `$ ${line}`)],
    },
  };
}

async function decideTaskStop(input: TaskStopInput): Promise<StopDecision> {
  const readWorkspace = (): WorkspaceStatus => readWorkspaceStatus(input.store, { workspace: input.workspace });
  let before: WorkspaceStatus;
  try {
    before = readWorkspace();
  } catch {
    return block('workspace_unavailable', NONE);
  }
  const target = input.target ?? DEFAULT_TASK_STOP_TARGET;
  let subject: LocalSubject;
  try {
    subject = readLocalSubject(input.store, before.repository, input.change, target);
  } catch (error) {
    return subjectUnreadable(error, before);
  }
  let token: string;
  try {
    token = readTokenFile(input.tokenFile);
  } catch {
    return block('token_unavailable', NONE);
  }
  let answer: QualificationAnswer | null = null;
  let callError: unknown = null;
  try {
    answer = await requestQualification({
      endpoint: input.endpoint,
      repository: input.repository,
      profile: input.profile,
      token,
      subject: { change_id: subject.change_id, context_digest: subject.context_digest },
      ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
    });
  } catch (error) {
    callError = error;
  }
  let after: WorkspaceStatus;
  try {
    after = readWorkspace();
  } catch {
    return block('workspace_unavailable', NONE);
  }
  let subjectAfter: LocalSubject;
  try {
    subjectAfter = readLocalSubject(input.store, after.repository, input.change, target);
  } catch (error) {
    return isAgentscmError(error) && SUBJECT_MISSING.has(error.code)
      ? block('subject_changed', CHECKPOINT)
      : block('local_store_unavailable', NONE);
  }

  // The local bytes first: an answer about other bytes than the workspace's says nothing of them.
  if (!before.ready) return block('workspace_not_clean', CHECKPOINT);
  if (!sameWorkspace(before, after)) return block('workspace_changed', CHECKPOINT);
  if (!sameSubject(subject, subjectAfter)) return block('subject_changed', CHECKPOINT);
  if (before.base_revision !== subject.revision) return block('base_mismatch', CHECKPOINT);

  if (answer === null) return block(callCategory(callError), NONE);
  // Strict validation ends with the subject: an answer for another revision is malformed.
  if (answer.revision !== subject.revision) return block('malformed_response', NONE);
  if (answer.qualified && answer.subject_current) return { decision: 'pass' };
  return answerBlock(answer);
}
