/**
 * Target workflow requirements on the workflow side: install a definition as a target's
 * required workflow (compiled and checked exactly as `skill-workflow plan` does), show it, and
 * compile an installed requirement for a subject revision — the entry points the agent-task
 * state machine derives its tasks from (docs/requirements.md).
 */
import { AgentscmError } from '../contracts/errors.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { quoteForMessage } from '../contracts/message-text.js';
import {
  decodeWorkflowDefinition,
  workflowDefinitionToJson,
  type WorkflowAction,
  type WorkflowDefinition,
} from '../contracts/workflow-definition.js';
import { resolveRepository } from '../native/repositories.js';
import {
  getRequirementByDigest,
  getTargetRequirement,
  installRequirement,
  type StoredRequirement,
  type TargetRequirement,
} from '../native/requirements.js';
import { versionContexts } from '../native/review-contexts.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction, writeTransaction, type Authority } from '../native/store.js';
import { listTargets } from '../native/targets.js';
import { readDefinitionFile } from './definition-file.js';
import { planReportOf, type PlanReport } from './plan-report.js';
import { compileWorkflow, type CompiledPlan, type PlanStep } from './plan.js';
import { layoutSkillPackage, resolvePackagePath } from './skill-package.js';

export interface RequirementView {
  readonly repository: string;
  readonly target: string;
  readonly requirement_digest: string;
  readonly name: string;
  readonly skill_digest: string;
  readonly source: { readonly revision: string; readonly policy_epoch: bigint };
  readonly installed_at_ms: number;
  readonly steps: PlanReport['steps'];
  readonly definition: JsonObject;
}

export interface RequirementInstallResult extends RequirementView {
  /** False when the target already required exactly this definition. */
  readonly changed: boolean;
}

/** Decode an installed requirement's retained definition. */
export function requirementDefinition(requirement: StoredRequirement): WorkflowDefinition {
  return decodeWorkflowDefinition(requirement.definition);
}

function viewOf(requirement: TargetRequirement, steps: PlanReport['steps']): RequirementView {
  return {
    repository: requirement.repository,
    target: requirement.target,
    requirement_digest: requirement.requirement_digest,
    name: requirement.name,
    skill_digest: requirement.skill_digest,
    source: { revision: requirement.revision, policy_epoch: requirement.policy_epoch },
    installed_at_ms: requirement.installed_at_ms,
    steps,
    definition: workflowDefinitionToJson(requirementDefinition(requirement)),
  };
}

function structuralSteps(definition: WorkflowDefinition, plan: CompiledPlan | null): PlanReport['steps'] {
  if (plan !== null) return planReportOf(plan).steps;
  return definition.steps.map((s, position) => ({
    position,
    id: s.id,
    kind: s.action.kind,
    required: s.required,
    needs: [...s.needs],
  }));
}

/**
 * `requirement install --target T FILE`: compile the definition against the authority and, in
 * the same write transaction, install it for the target. The requirement digest is the plan
 * digest of the compiled definition.
 */
export function installRequirementFile(
  store: Store,
  input: {
    readonly repository?: string | undefined;
    readonly target: string;
    readonly file: string;
    readonly nowMs?: number;
  },
): RequirementInstallResult {
  const { definition } = readDefinitionFile(input.file);
  const auth = store.authority();
  return writeTransaction(auth, () => {
    if (input.repository !== undefined) {
      const named = resolveRepository(auth, input.repository);
      if (named.id !== definition.source.repository) {
        throw new AgentscmError(
          'WORKFLOW_SOURCE_MISMATCH',
          `the definition binds repository ${definition.source.repository}, not ${named.id} (${named.name})`,
          {
            hint: 'install the definition for the repository it names',
          },
        );
      }
    }
    const plan = compileWorkflow(auth, definition);
    const { requirement, changed } = installRequirement(auth, {
      repository: plan.source.repository,
      target: input.target,
      requirementDigest: plan.digest,
      name: plan.name,
      definition: plan.definitionBytes,
      skillDigest: plan.skill.digest,
      revision: plan.source.revision,
      policyEpoch: plan.source.policy_epoch,
      nowMs: input.nowMs ?? Date.now(),
    });
    return { ...viewOf(requirement, structuralSteps(definition, plan)), changed };
  });
}

/** `requirement show --target T`: read-only; REQUIREMENT_NOT_FOUND when the target has none. */
export function showRequirement(
  store: Store,
  input: { readonly repository?: string | undefined; readonly target: string },
): RequirementView {
  const auth = store.authority();
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, input.repository);
    // A target that does not exist is not a target without a requirement.
    const targets = listTargets(auth, repository.id).map((target) => target.name);
    if (!targets.includes(input.target)) {
      throw new AgentscmError(
        'TARGET_NOT_FOUND',
        `repository ${repository.name} has no target ${quoteForMessage(input.target)}`,
        {
          hint: targets.length === 0 ? 'the repository has no targets' : `its targets: ${targets.join(', ')}`,
        },
      );
    }
    const requirement = getTargetRequirement(auth, repository.id, input.target);
    const definition = requirementDefinition(requirement);
    let plan: CompiledPlan | null = null;
    try {
      plan = compileWorkflow(auth, definition);
    } catch {
      // A requirement installed under an older policy epoch no longer compiles as is; its
      // retained definition is still shown, in declared order.
      plan = null;
    }
    return viewOf(requirement, structuralSteps(definition, plan));
  });
}

/** What an installed requirement is compiled against: the exact subject of a Change version. */
export interface RequirementSubject {
  readonly revision: string;
  readonly policyEpoch: bigint;
  /**
   * Required when the requirement has command steps: they are bound to this Change version. The
   * first command step binds `contextDigest` (the subject's context); a command step whose recipe
   * path differs from the first one's binds the version's context of its own recipe, which
   * `contextOf` finds (docs/checks.md "Several command checks"); it is only called for such a step.
   */
  readonly change?: {
    readonly id: string;
    readonly version: bigint;
    readonly contextDigest: string;
    readonly contextOf?: (recipePath: string) => string | undefined;
  };
}

function contextNotFound(stepId: string, recipePath: string, changeId: string): AgentscmError {
  return new AgentscmError(
    'CONTEXT_NOT_FOUND',
    `step "${stepId}": Change ${changeId} has no review context for recipe ${recipePath} at its current version`,
    {
      hint:
        '`agentscm checkpoint --change ID` creates a context for every command step; or run ' +
        '`agentscm context create --change ID --runner PATH` for that recipe',
      details: { step: stepId, recipe_path: recipePath },
    },
  );
}

/**
 * Rebind a requirement's definition to a subject (pure): the source revision and policy epoch
 * become the subject's, and every command step binds the subject's Change version and context.
 * Steps, dependencies, expectations and the skill declaration are unchanged.
 */
export function bindDefinitionToSubject(
  definition: WorkflowDefinition,
  subject: RequirementSubject,
): WorkflowDefinition {
  const layout = layoutSkillPackage(definition.skill);
  let subjectRecipe: string | null = null;
  const steps = definition.steps.map((step) => {
    if (step.action.kind !== 'command') return step;
    const change = subject.change;
    if (change === undefined) {
      throw new AgentscmError(
        'WORKFLOW_COMMAND_INVALID',
        `requirement step "${step.id}" is a command step; compiling it needs the subject's Change version and context`,
        {
          hint: 'pass the Change id, version and context digest of the subject',
          details: { step: step.id },
        },
      );
    }
    const recipePath = resolvePackagePath(layout, step.action.runner);
    subjectRecipe ??= recipePath;
    let contextDigest = change.contextDigest;
    if (recipePath !== subjectRecipe) {
      const own = change.contextOf?.(recipePath);
      if (own === undefined) throw contextNotFound(step.id, recipePath, change.id);
      contextDigest = own;
    }
    const action: WorkflowAction = {
      ...step.action,
      change: { repository: definition.source.repository, id: change.id },
      change_version: change.version,
      context_digest: contextDigest,
    };
    return { ...step, action };
  });
  return {
    ...definition,
    source: { repository: definition.source.repository, revision: subject.revision, policy_epoch: subject.policyEpoch },
    steps,
  };
}

/** The subject with a lookup of the version's other contexts by recipe path (read when needed). */
function withVersionContexts(
  auth: Authority,
  requirement: StoredRequirement,
  subject: RequirementSubject,
): RequirementSubject {
  const change = subject.change;
  if (change === undefined || change.contextOf !== undefined) return subject;
  let byPath: Map<string, string> | undefined;
  const contextOf = (recipePath: string): string | undefined => {
    byPath ??= new Map(
      readTransaction(auth, () =>
        versionContexts(auth, {
          repository: requirement.repository,
          changeId: change.id,
          version: change.version,
          revision: subject.revision,
          policyEpoch: subject.policyEpoch,
        }),
      ).map((r) => [r.recipe_path, r.context_digest]),
    );
    return byPath.get(recipePath);
  };
  return { ...subject, change: { ...change, contextOf } };
}

export interface CompiledRequirement {
  readonly requirement: StoredRequirement;
  /** The requirement compiled for the subject; plan.steps is the execution order. */
  readonly plan: CompiledPlan;
}

/**
 * Compile an installed requirement for a subject against the authority (call inside the
 * caller's read snapshot for a consistent view). The subject's skill package must be
 * byte-identical to the installed one: candidate-authored skill bytes cannot replace the
 * operator's (WORKFLOW_BINDING_CHANGED otherwise).
 */
export function compileRequirementPlan(
  auth: Authority,
  requirement: StoredRequirement,
  subject: RequirementSubject,
): CompiledRequirement {
  const bound = bindDefinitionToSubject(
    requirementDefinition(requirement),
    withVersionContexts(auth, requirement, subject),
  );
  const plan = compileWorkflow(auth, bound);
  if (plan.skill.digest !== requirement.skill_digest) {
    throw new AgentscmError(
      'WORKFLOW_BINDING_CHANGED',
      `the skill package at revision ${subject.revision} is ${plan.skill.digest}, not the installed ` +
        `requirement's ${requirement.skill_digest}`,
      {
        hint: 'reinstall the requirement to adopt a changed skill package',
        details: { requirement_digest: requirement.requirement_digest },
      },
    );
  }
  return { requirement, plan };
}

/** The target's current requirement compiled for a subject (REQUIREMENT_NOT_FOUND when none is installed). */
export function compileTargetRequirement(
  auth: Authority,
  repository: string,
  target: string,
  subject: RequirementSubject,
): CompiledRequirement {
  return readTransaction(auth, () =>
    compileRequirementPlan(auth, getTargetRequirement(auth, repository, target), subject),
  );
}

/** An installed requirement by digest compiled for a subject (tasks name requirement_digest). */
export function compileRequirementByDigest(
  auth: Authority,
  repository: string,
  requirementDigest: string,
  subject: RequirementSubject,
): CompiledRequirement {
  return readTransaction(auth, () =>
    compileRequirementPlan(auth, getRequirementByDigest(auth, repository, requirementDigest), subject),
  );
}

/** The steps of a compiled plan in execution order (what tasks are derived from). */
export function requirementSteps(compiled: CompiledRequirement): readonly PlanStep[] {
  return compiled.plan.steps;
}
