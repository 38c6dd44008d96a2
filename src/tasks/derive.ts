/**
 * Task derivation (docs/agent-tasks.md "Derivation rules": tasks are derived only from the
 * installed WorkflowRequirement, a compiled immutable current context and fixed action-class
 * rules). The subject is read from the authority — the Change's current version and revision,
 * the exact stored review context, the current policy epoch, the target and its installed
 * requirement — and every step of the compiled plan becomes one task (src/tasks/task-build.ts).
 */
import { AgentscmError } from '../contracts/errors.js';
import type { WorkflowTaskSubject } from '../contracts/task/subject.js';
import { getChange } from '../native/changes.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { resolveRepository } from '../native/repositories.js';
import { getTargetRequirement } from '../native/requirements.js';
import { findReviewContext } from '../native/review-contexts.js';
import { contentToken, type SqliteDatabase } from '../native/sqlite.js';
import { readTransaction, type Authority } from '../native/store.js';
import { getTarget } from '../native/targets.js';
import { compileRequirementPlan } from '../workflows/requirement.js';
import { buildTasks, type DerivedTask } from './task-build.js';

export type { DerivedTask } from './task-build.js';

/** What selects a subject: the adapter's repository/profile/target plus the Change and its context. */
export interface SubjectSelection {
  /** Repository id or name; undefined → the only repository of the store. */
  readonly repository?: string | undefined;
  readonly profile: string;
  readonly target: string;
  readonly change_id: string;
  readonly context_digest: string;
}

export interface DerivedSubject {
  /** The subject fields common to every task (step_id is per task). */
  readonly base: Omit<WorkflowTaskSubject, 'step_id'>;
  /** In plan (execution) order. */
  readonly tasks: readonly DerivedTask[];
}

function stale(message: string, details: Record<string, unknown> = {}): AgentscmError {
  return new AgentscmError('TASK_STALE', message, {
    hint:
      "checkpoint or create a review context for the Change's current version, then call next again for the " +
      'current subject',
    details,
  });
}

/** Derivations of immutable inputs, reused while their key is current (see deriveSubject). */
const DERIVATION_CACHE_LIMIT = 32;
const derivationCache = new Map<string, DerivedSubject>();

function rememberDerivation(key: string, derived: DerivedSubject): void {
  derivationCache.delete(key);
  derivationCache.set(key, derived);
  while (derivationCache.size > DERIVATION_CACHE_LIMIT) {
    const oldest = derivationCache.keys().next().value;
    if (oldest === undefined) break;
    derivationCache.delete(oldest);
  }
}

/**
 * What one authority connection last found current, valid while its content token is unchanged
 * (docs/agent-tasks.md "Rechecks"): derivations by selection and subjects that passed every
 * recheck. The token (PRAGMA data_version and the connection's total_changes()) is read inside
 * the caller's snapshot or writer reservation; while it is the one the entries were read under,
 * no connection has committed anything since, so every row a recheck reads (repository, policy
 * epoch, Change, context bytes, target, requirement) is byte-identical and the recheck would
 * find the same answer. Any commit to the authority empties the memo. Failures are never kept.
 */
interface CurrentMemo {
  token: string;
  readonly derived: Map<string, DerivedSubject>;
  readonly subjects: Set<string>;
}

const MEMO_LIMIT = 64;
const currentMemos = new WeakMap<SqliteDatabase, CurrentMemo>();

function memoOf(auth: Authority): CurrentMemo {
  const token = contentToken(auth.db);
  let memo = currentMemos.get(auth.db);
  if (memo === undefined) {
    memo = { token, derived: new Map(), subjects: new Set() };
    currentMemos.set(auth.db, memo);
  } else if (memo.token !== token) {
    memo.token = token;
    memo.derived.clear();
    memo.subjects.clear();
  }
  return memo;
}

function selectionKey(selection: SubjectSelection): string {
  return JSON.stringify([
    selection.repository ?? null,
    selection.profile,
    selection.target,
    selection.change_id,
    selection.context_digest,
  ]);
}

// Keys by subject object: subjects are immutable, and a session rechecks the same retained
// task's subject on every transition.
const subjectKeys = new WeakMap<Omit<WorkflowTaskSubject, 'step_id'>, string>();

function subjectKey(subject: Omit<WorkflowTaskSubject, 'step_id'>): string {
  let key = subjectKeys.get(subject);
  if (key === undefined) {
    key = subjectKeyOf(subject);
    subjectKeys.set(subject, key);
  }
  return key;
}

function subjectKeyOf(subject: Omit<WorkflowTaskSubject, 'step_id'>): string {
  return JSON.stringify([
    subject.repository,
    subject.profile,
    subject.target,
    subject.revision,
    subject.change_id,
    subject.change_version.toString(),
    subject.context_digest,
    subject.policy_epoch.toString(),
    subject.requirement_digest,
  ]);
}

function bounded<V>(collection: Map<string, V> | Set<string>): void {
  if (collection.size >= MEMO_LIMIT) collection.clear();
}

/**
 * Derive the current subject and its tasks (docs/agent-tasks.md "Derivation rules"). The review
 * context must be the exact stored one of the Change's current version, revision and the
 * current policy epoch (TASK_STALE otherwise). Runs in one authority read snapshot.
 *
 * The current facts (Change version and revision, context, policy epoch, target requirement)
 * are read again whenever the connection's content token moved (see CurrentMemo); the
 * compilation they select is a pure function of immutable, digest-named inputs (revision
 * bytes, requirement definition, context), so it is reused from a small in-process cache keyed
 * by all of them.
 */
export function deriveSubject(auth: Authority, selection: SubjectSelection): DerivedSubject {
  if (!auth.db.inTransaction) {
    // A memo hit reads only the content token, one statement and so its own snapshot: an
    // unchanged token proves the remembered derivation current at that read.
    const known = memoOf(auth).derived.get(selectionKey(selection));
    if (known !== undefined) return known;
  }
  return readTransaction(auth, () => {
    const memo = memoOf(auth);
    const key = selectionKey(selection);
    const known = memo.derived.get(key);
    if (known !== undefined) return known;
    const derived = deriveFresh(auth, selection);
    bounded(memo.derived);
    memo.derived.set(key, derived);
    // Derivation checks exactly what subjectDrift checks (same rows, same comparisons).
    bounded(memo.subjects);
    memo.subjects.add(subjectKey(derived.base));
    return derived;
  });
}

function deriveFresh(auth: Authority, selection: SubjectSelection): DerivedSubject {
  const repository = resolveRepository(auth, selection.repository).id;
  const change = getChange(auth, repository, selection.change_id);
  const policyEpoch = currentPolicyEpoch(auth, repository);
  const context = findReviewContext(auth, repository, selection.context_digest);
  if (context === null) {
    throw new AgentscmError(
      'CONTEXT_NOT_FOUND',
      `repository ${repository} has no review context ${selection.context_digest}`,
      {
        hint: 'create one with `agentscm context create --change ID --runner PATH` and pass its context_digest',
      },
    );
  }
  const c = context.context;
  if (
    c.change.id !== change.id ||
    c.change_version !== change.current_version ||
    c.revision !== change.current_revision ||
    c.policy_epoch !== policyEpoch
  ) {
    throw stale(
      `review context ${selection.context_digest} binds Change ${c.change.id} version ${c.change_version} at ` +
        `policy epoch ${c.policy_epoch}; Change ${change.id} is at version ${change.current_version} and the ` +
        `policy epoch is ${policyEpoch}`,
      {
        context_digest: selection.context_digest,
      },
    );
  }
  getTarget(auth, repository, selection.target);
  const requirement = getTargetRequirement(auth, repository, selection.target);
  const key = JSON.stringify([
    auth.dataDir,
    repository,
    selection.profile,
    selection.target,
    change.id,
    change.current_version.toString(),
    change.current_revision,
    selection.context_digest,
    policyEpoch.toString(),
    requirement.requirement_digest,
  ]);
  const cached = derivationCache.get(key);
  if (cached !== undefined) {
    rememberDerivation(key, cached);
    return cached;
  }
  const compiled = compileRequirementPlan(auth, requirement, {
    revision: change.current_revision,
    policyEpoch,
    change: { id: change.id, version: change.current_version, contextDigest: selection.context_digest },
  });
  const base: Omit<WorkflowTaskSubject, 'step_id'> = {
    version: 1,
    repository,
    profile: selection.profile,
    target: selection.target,
    revision: change.current_revision,
    change_id: change.id,
    change_version: change.current_version,
    context_digest: selection.context_digest,
    policy_epoch: policyEpoch,
    requirement_digest: requirement.requirement_digest,
    plan_digest: compiled.plan.digest,
    skill_digest: compiled.plan.skill.digest,
  };
  // Only the tasks and their plan steps are kept: the compiled skill bytes are not retained.
  const derived: DerivedSubject = { base, tasks: buildTasks(base, compiled) };
  rememberDerivation(key, derived);
  return derived;
}

/** One derived task by id (TASK_NOT_FOUND), and its digest when given (TASK_STALE on a mismatch). */
export function findDerivedTask(derived: DerivedSubject, taskId: string, digest?: string): DerivedTask {
  const found = derived.tasks.find((t) => t.task.task_id === taskId);
  if (found === undefined) {
    throw new AgentscmError(
      'TASK_NOT_FOUND',
      `task ${taskId} is not a task of the current subject of Change ${derived.base.change_id}`,
      {
        hint: 'call requirements or next for the current subject and use a task_id it lists',
        details: { task_id: taskId },
      },
    );
  }
  if (digest !== undefined && digest !== found.digest) {
    throw stale(`task ${taskId} is derived with digest ${found.digest}, not ${digest}`, { task_id: taskId });
  }
  return found;
}

/** Subject selection of a retained task (its own Change and context). */
export function selectionOfSubject(subject: WorkflowTaskSubject): SubjectSelection {
  return {
    repository: subject.repository,
    profile: subject.profile,
    target: subject.target,
    change_id: subject.change_id,
    context_digest: subject.context_digest,
  };
}

/**
 * Recheck a subject against the authority through the caller's connection (inside its
 * transaction): repository, policy epoch, Change current version and revision, the exact
 * stored context bytes, target and installed requirement. Returns the first difference, or
 * null when every field is current. A subject found current under the connection's unchanged
 * content token is current again without reading the rows (see CurrentMemo).
 */
export function subjectDrift(auth: Authority, subject: Omit<WorkflowTaskSubject, 'step_id'>): string | null {
  return readTransaction(auth, () => {
    const memo = memoOf(auth);
    const key = subjectKey(subject);
    if (memo.subjects.has(key)) return null;
    const drift = driftFresh(auth, subject);
    if (drift === null) {
      bounded(memo.subjects);
      memo.subjects.add(key);
    }
    return drift;
  });
}

function driftFresh(auth: Authority, subject: Omit<WorkflowTaskSubject, 'step_id'>): string | null {
  const repository = resolveRepository(auth, subject.repository).id;
  if (currentPolicyEpoch(auth, repository) !== subject.policy_epoch) return 'policy_epoch';
  const change = getChange(auth, repository, subject.change_id);
  if (change.current_version !== subject.change_version) return 'change_version';
  if (change.current_revision !== subject.revision) return 'revision';
  const context = findReviewContext(auth, repository, subject.context_digest);
  if (context === null) return 'context_digest';
  const c = context.context;
  if (
    c.change.id !== subject.change_id ||
    c.change_version !== subject.change_version ||
    c.revision !== subject.revision ||
    c.policy_epoch !== subject.policy_epoch
  ) {
    return 'context_digest';
  }
  getTarget(auth, repository, subject.target);
  if (getTargetRequirement(auth, repository, subject.target).requirement_digest !== subject.requirement_digest)
    return 'requirement_digest';
  return null;
}

/** Refuse a subject that is no longer current (TASK_STALE naming the first changed field). */
export function requireCurrentSubject(auth: Authority, subject: Omit<WorkflowTaskSubject, 'step_id'>): void {
  let drift: string | null;
  try {
    drift = subjectDrift(auth, subject);
  } catch (error) {
    if (
      error instanceof AgentscmError &&
      ['CHANGE_NOT_FOUND', 'TARGET_NOT_FOUND', 'REQUIREMENT_NOT_FOUND', 'REPOSITORY_NOT_FOUND'].includes(error.code)
    ) {
      throw stale(`the subject is no longer current: ${error.message}`, { cause_code: error.code });
    }
    throw error;
  }
  if (drift !== null) throw stale(`the task's subject is no longer current: its ${drift} changed`, { field: drift });
}
