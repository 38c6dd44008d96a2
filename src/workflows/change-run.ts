/**
 * `skill-workflow run --change C` and `skill-workflow plan --change C` (docs/skill-workflows.md
 * "Running a target's requirement on a Change"): the target's installed requirement compiled
 * for the Change's current version, revision and policy epoch and, when it has command steps,
 * the Change's current review context — nobody writes source.revision, change_version or
 * context_digest by hand. The run ID defaults to one derived from the Change, its version and
 * the plan digest, so running again reopens the same run.
 */
import { firstCommandRecipePath } from '../contracts/workflow-definition.js';
import { getChange } from '../native/changes.js';
import { checkGenericId } from '../native/checks.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { resolveRepository } from '../native/repositories.js';
import { getTargetRequirement } from '../native/requirements.js';
import { resolveContextRef, soleCurrentContext } from '../native/review-contexts.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction } from '../native/store.js';
import { planReportOf, type PlanReport } from './plan-report.js';
import { compileRequirementPlan, requirementDefinition } from './requirement.js';
import { checkTargetExists } from './version-contexts.js';

/** The longest run ID (the generic ID rule: [A-Za-z0-9._-]{1,128}). */
export const RUN_ID_MAX_LENGTH = 128;

/**
 * The default run ID of a Change's run: `C-vN-` and the first 12 hex digits of the plan digest,
 * the Change ID cut from its end so that the whole fits 128 characters (the plan digest binds the
 * whole Change ID, so two long IDs with one prefix still differ).
 */
export function defaultChangeRunId(change: string, version: bigint, planDigest: string): string {
  const suffix = `-v${version}-${planDigest.slice(0, 12)}`;
  return `${change.slice(0, Math.max(1, RUN_ID_MAX_LENGTH - suffix.length))}${suffix}`;
}

export interface ChangeRunInput {
  readonly repository?: string | undefined;
  readonly change: string;
  readonly target: string;
  /** --context: a digest or unique prefix (default: the Change's sole current context). */
  readonly context?: string | undefined;
}

/** The Change's current subject a requirement was compiled for (the run report's `subject`). */
export interface ChangeRunSubject {
  readonly repository: string;
  readonly change: string;
  readonly change_version: bigint;
  readonly revision: string;
  readonly policy_epoch: bigint;
  readonly target: string;
  readonly requirement_digest: string;
  /** Null when the requirement has no command steps (they alone bind a context). */
  readonly context_digest: string | null;
  readonly plan_digest: string;
  /** The default run ID (defaultChangeRunId). */
  readonly run_id: string;
}

/** The requirement bound to the Change's current subject. */
export interface ChangeRunBinding {
  readonly subject: ChangeRunSubject;
  /** The bound definition's canonical bytes: what the FILE form would read. */
  readonly definitionBytes: Uint8Array;
  readonly plan: PlanReport;
}

/**
 * Compile the target's installed requirement for the Change's current subject in one read
 * snapshot (CHANGE_NOT_FOUND, TARGET_NOT_FOUND, REQUIREMENT_NOT_FOUND, CONTEXT_NOT_FOUND,
 * CONTEXT_AMBIGUOUS, or any compile error of the bound definition). Writes nothing.
 */
export function bindRequirementToChange(store: Store, input: ChangeRunInput): ChangeRunBinding {
  checkGenericId(input.change, 'Change ID');
  const auth = store.authority();
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, input.repository).id;
    const change = getChange(auth, repository, input.change);
    checkTargetExists(auth, repository, input.target);
    const requirement = getTargetRequirement(auth, repository, input.target);
    const policyEpoch = currentPolicyEpoch(auth, repository);
    const hasCommand = requirementDefinition(requirement).steps.some((s) => s.action.kind === 'command');
    const contextDigest = !hasCommand
      ? null
      : input.context === undefined
        ? soleCurrentContext(auth, repository, change.id, () =>
            firstCommandRecipePath(requirementDefinition(requirement)),
          )
        : resolveContextRef(auth, repository, input.context);
    const compiled = compileRequirementPlan(auth, requirement, {
      revision: change.current_revision,
      policyEpoch,
      ...(contextDigest === null ? {} : { change: { id: change.id, version: change.current_version, contextDigest } }),
    });
    const plan = compiled.plan;
    return {
      subject: {
        repository,
        change: change.id,
        change_version: change.current_version,
        revision: change.current_revision,
        policy_epoch: policyEpoch,
        target: input.target,
        requirement_digest: requirement.requirement_digest,
        context_digest: contextDigest,
        plan_digest: plan.digest,
        run_id: defaultChangeRunId(change.id, change.current_version, plan.digest),
      },
      definitionBytes: plan.definitionBytes,
      plan: planReportOf(plan),
    };
  });
}
