/**
 * A changed lockfile in qualification (docs/deps.md "A changed lockfile"): a command step whose
 * installed collector profile runs a recipe with AGENTSCM_DEPS_LOCKFILE runs on a dependency image
 * built from one lockfile, and `collect` refuses a revision whose lockfile differs from it
 * (DEPS_LOCKFILE_CHANGED) before any container runs. Qualification tells the agent before it
 * claims: for each such task not yet succeeded, when the Change's revision holds another lockfile
 * blob than the protected target's revision — the revision the dependency image was checked
 * against, since every revision the target moves to passed this step on the pinned image — the
 * answer carries a `deps_lockfile_changed` failure for the task. Read from the store only (the
 * revisions' blob digests and the installed profile): no engine. Diagnostic only: the task is not
 * succeeded, so the answer is unqualified with or without it; none is added past the answer's
 * bound of MAX_QUALIFICATION_FAILURES failures.
 */
import {
  MAX_QUALIFICATION_FAILURES,
  type QualificationAnswer,
  type QualificationFailure,
  type QualificationTask,
} from '../../contracts/task/qualification.js';
import { stepCollectorProfileId } from '../../native/collector-commands.js';
import { findCollectorProfile } from '../../native/collector-profiles.js';
import { statRevisionPath } from '../../native/revisions.js';
import type { Authority } from '../../native/store.js';
import { getTarget } from '../../native/targets.js';
import { DEPS_RECIPE_ENV } from '../../workflows/checks/recipe-flags.js';
import type { DerivedSubject } from '../derive.js';

/** The failure code of a task whose revision carries another lockfile than its dependency image. */
export const DEPS_LOCKFILE_CHANGED_FAILURE = 'deps_lockfile_changed';

/** The lockfile path the step's installed profile compares, or null when the step uses no dependency image. */
function stepLockfile(auth: Authority, derived: DerivedSubject, step: string): string | null {
  const profileId = stepCollectorProfileId(auth, {
    repository: derived.base.repository,
    workflow_profile: derived.base.profile,
    step,
  });
  if (profileId === null) return null;
  const installed = findCollectorProfile(auth, profileId);
  if (installed === null || installed.profile.kind !== 'command') return null;
  return installed.profile.recipe.env[DEPS_RECIPE_ENV.lockfile] ?? null;
}

/** The blob digest of `path` in `revision`, or null when the revision has no such file. */
function lockfileBlob(auth: Authority, repository: string, revision: string, path: string): string | null {
  return statRevisionPath(auth, repository, revision, path)?.blob ?? null;
}

/**
 * `answer` with a `deps_lockfile_changed` failure for each task not yet succeeded for which `changed` says so, in
 * task order, while the answer holds fewer than MAX_QUALIFICATION_FAILURES failures. A superseded answer is unchanged.
 */
export function appendDepsFailures(
  answer: QualificationAnswer,
  changed: (task: QualificationTask) => boolean,
): QualificationAnswer {
  if (!answer.subject_current) return answer;
  const added: QualificationFailure[] = [];
  for (const task of answer.tasks) {
    if (answer.failures.length + added.length >= MAX_QUALIFICATION_FAILURES) break;
    if (task.state === 'succeeded' || !changed(task)) continue;
    added.push({ task_id: task.task_id, code: DEPS_LOCKFILE_CHANGED_FAILURE });
  }
  return added.length === 0 ? answer : { ...answer, failures: [...answer.failures, ...added] };
}

/** The answer with a `deps_lockfile_changed` failure for each task whose lockfile changed (see module comment). */
export function withDepsLockfileFailures(
  auth: Authority,
  derived: DerivedSubject,
  answer: QualificationAnswer,
): QualificationAnswer {
  const repository = derived.base.repository;
  let targetRevision: string | undefined;
  return appendDepsFailures(answer, (task) => {
    const path = stepLockfile(auth, derived, task.step_id);
    if (path === null) return false;
    targetRevision ??= getTarget(auth, repository, derived.base.target).revision;
    return (
      lockfileBlob(auth, repository, derived.base.revision, path) !==
      lockfileBlob(auth, repository, targetRevision, path)
    );
  });
}
