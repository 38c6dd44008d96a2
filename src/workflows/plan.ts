/**
 * Compile a workflow definition into a plan (docs/skill-workflows.md "The definition": the
 * revision, policy epoch, skill paths, dependency graph and source expectations must all validate
 * before a plan is produced). compileStructure is pure; compileWorkflow adds the checks against the
 * native authority and the packaged skill bytes. The plan identity is a plan-domain digest over the
 * canonical plan object (docs/skill-workflows.md "Identities").
 */
import { digestCanonical, DOMAINS } from '../contracts/digest.js';
import { AgentscmError } from '../contracts/errors.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { validateRelativePath } from '../contracts/paths.js';
import {
  checkCoverageWithinPolicy,
  decodeReviewPolicy,
  reviewActionToJson,
  type ReviewAction,
} from '../contracts/review/policy.js';
import {
  encodeWorkflowDefinition,
  workflowActionToJson,
  type CommandAction,
  type RequireCapabilityAction,
  type SourcePathsAction,
  type WorkflowDefinition,
  type WorkflowSource,
} from '../contracts/workflow-definition.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { getRepository } from '../native/repositories.js';
import { getRevision } from '../native/revisions.js';
import { readTransaction, type Authority } from '../native/store.js';
import { validateCommandBinding } from './command-binding.js';
import { orderSteps } from './graph.js';
import {
  layoutSkillPackage,
  loadSkillPackage,
  resolvePackagePath,
  type SkillPackage,
  type SkillPackageLayout,
} from './skill-package.js';

/** A command action with its recipe resolved to the exact packaged bytes. */
export interface PlanCommandAction extends CommandAction {
  /** Full native source path of the recipe (skill directory + runner). */
  readonly recipe_path: string;
  /** SHA-256 of the recipe bytes in the revision. */
  readonly recipe_sha256: string;
}

/** A review action with its policy resolved to the exact packaged bytes (docs/review.md). */
export interface PlanReviewAction extends ReviewAction {
  /** Full native source path of the policy (skill directory + policy). */
  readonly policy_path: string;
  /** SHA-256 of the policy bytes in the revision (the review's policy identity). */
  readonly policy_sha256: string;
}

export type PlanAction = SourcePathsAction | PlanCommandAction | RequireCapabilityAction | PlanReviewAction;

export interface PlanStep {
  /** Index in execution (stable topological) order. */
  readonly position: number;
  readonly id: string;
  readonly needs: readonly string[];
  readonly required: boolean;
  readonly action: PlanAction;
}

/** Everything that can be checked without source access. */
export interface StructuralPlan {
  readonly definition: WorkflowDefinition;
  readonly layout: SkillPackageLayout;
  /** Declared step indexes in execution order. */
  readonly order: readonly number[];
}

export interface CompiledPlan {
  readonly definition: WorkflowDefinition;
  /** Canonical definition bytes (what the journal and the authority retain). */
  readonly definitionBytes: Uint8Array;
  readonly name: string;
  readonly source: WorkflowSource;
  readonly skill: SkillPackage;
  /** Execution order. */
  readonly steps: readonly PlanStep[];
  /** Plan identity (planDigest). */
  readonly digest: string;
}

/**
 * The structural half of compilation (docs/skill-workflows.md "The definition"): step graph,
 * package layout, and the path and binding rules of each action. Pure, so every caller derives the
 * same order.
 */
export function compileStructure(definition: WorkflowDefinition): StructuralPlan {
  const layout = layoutSkillPackage(definition.skill);
  const order = orderSteps(definition.steps);
  const resources = new Set(definition.skill.resources);
  for (const step of definition.steps) {
    const action = step.action;
    if (action.kind === 'review') {
      const policyPath = resolvePackagePath(layout, action.policy);
      if (!resources.has(policyPath)) {
        throw new AgentscmError(
          'REVIEW_STEP_INVALID',
          `step "${step.id}": policy "${action.policy}" resolves to "${policyPath}", ` +
            'which is not a declared skill resource',
          {
            hint:
              'declare the review policy by its full source path in skill.resources and name it relative to ' +
              'the skill directory in policy',
            details: { step: step.id, policy_path: policyPath },
          },
        );
      }
    } else if (action.kind === 'source_paths') {
      for (const expectation of action.expectations)
        validateRelativePath(expectation.path, `step "${step.id}" expectation path`);
    } else if (action.kind === 'command') {
      validateRelativePath(action.runner, `step "${step.id}" runner`);
      const recipePath = resolvePackagePath(layout, action.runner);
      if (!resources.has(recipePath)) {
        throw new AgentscmError(
          'WORKFLOW_COMMAND_INVALID',
          `step "${step.id}": runner "${action.runner}" resolves to "${recipePath}", ` +
            'which is not a declared skill resource',
          {
            hint:
              'declare the recipe by its full source path in skill.resources and name it relative to ' +
              'the skill directory in runner',
            details: { step: step.id, recipe_path: recipePath },
          },
        );
      }
      if (action.change.repository !== definition.source.repository) {
        throw new AgentscmError(
          'WORKFLOW_SOURCE_MISMATCH',
          `step "${step.id}": its Change belongs to repository ${action.change.repository}, ` +
            `not the workflow's repository ${definition.source.repository}`,
          {
            hint: 'bind the command step to a Change of the same repository',
            details: { step: step.id },
          },
        );
      }
    }
  }
  return { definition, layout, order };
}

/** Compile against the native authority (read snapshot) and the packaged skill bytes. */
export function compileWorkflow(auth: Authority, definition: WorkflowDefinition): CompiledPlan {
  const structure = compileStructure(definition);
  const { source } = definition;
  return readTransaction(auth, () => {
    getRepository(auth, source.repository);
    getRevision(auth, source.repository, source.revision);
    const epoch = currentPolicyEpoch(auth, source.repository);
    if (epoch !== source.policy_epoch) {
      throw new AgentscmError(
        'WORKFLOW_POLICY_STALE',
        `the definition binds policy epoch ${source.policy_epoch}, ` +
          `but repository ${source.repository} is at policy epoch ${epoch}`,
        {
          hint: `set source.policy_epoch to ${epoch} after reviewing the workflow against the current policy`,
          details: { declared: source.policy_epoch.toString(), current: epoch.toString() },
        },
      );
    }
    const skill = loadSkillPackage(auth, source.repository, source.revision, structure.layout);
    const bytesByPath = new Map(skill.entries.map((entry) => [entry.path, entry]));
    const steps = structure.order.map((index, position): PlanStep => {
      const step = definition.steps[index];
      if (step === undefined) throw new AgentscmError('INTERNAL', 'step order out of range');
      const declared = step.action;
      if (declared.kind === 'review') {
        const policyPath = resolvePackagePath(structure.layout, declared.policy);
        const policy = bytesByPath.get(policyPath);
        if (policy === undefined) throw new AgentscmError('INTERNAL', `review policy ${policyPath} was not loaded`);
        checkCoverageWithinPolicy(declared, decodeReviewPolicy(policy.bytes));
        const action: PlanReviewAction = { ...declared, policy_path: policyPath, policy_sha256: policy.sha256 };
        return { position, id: step.id, needs: step.needs, required: step.required, action };
      }
      if (declared.kind !== 'command')
        return { position, id: step.id, needs: step.needs, required: step.required, action: declared };
      const recipePath = resolvePackagePath(structure.layout, declared.runner);
      const recipe = bytesByPath.get(recipePath);
      if (recipe === undefined) throw new AgentscmError('INTERNAL', `recipe ${recipePath} was not loaded`);
      validateCommandBinding(auth, {
        stepId: step.id,
        source,
        action: declared,
        recipePath,
        recipeBytes: recipe.bytes,
        recipeSha256: recipe.sha256,
      });
      const action: PlanCommandAction = { ...declared, recipe_path: recipePath, recipe_sha256: recipe.sha256 };
      return { position, id: step.id, needs: step.needs, required: step.required, action };
    });
    const partial = { name: definition.name, source, skill, steps };
    return {
      definition,
      definitionBytes: encodeWorkflowDefinition(definition),
      ...partial,
      digest: planDigest(partial),
    };
  });
}

function planActionToJson(action: PlanAction): JsonObject {
  if (action.kind === 'review')
    return { ...reviewActionToJson(action), policy_path: action.policy_path, policy_sha256: action.policy_sha256 };
  if (action.kind !== 'command') return workflowActionToJson(action);
  return {
    kind: action.kind,
    runner: action.runner,
    recipe_path: action.recipe_path,
    recipe_sha256: action.recipe_sha256,
    change: { repository: action.change.repository, id: action.change.id },
    change_version: action.change_version,
    context_digest: action.context_digest,
  };
}

type PlanIdentityInput = Pick<CompiledPlan, 'name' | 'source' | 'skill' | 'steps'>;

/**
 * The canonical plan object: {"kind":"skill-workflow-plan","version":1,"name","source",
 * "skill":{"entrypoint","digest"},"steps":[{"id","needs","required","action"}…]} with steps
 * in execution order, command actions carrying their recipe path and SHA-256 and review actions
 * their policy path and SHA-256.
 */
export function planToJson(plan: PlanIdentityInput): JsonObject {
  return {
    kind: 'skill-workflow-plan',
    version: 1,
    name: plan.name,
    source: {
      repository: plan.source.repository,
      revision: plan.source.revision,
      policy_epoch: plan.source.policy_epoch,
    },
    skill: { entrypoint: plan.skill.entrypoint, digest: plan.skill.digest },
    steps: plan.steps.map((step) => ({
      id: step.id,
      needs: [...step.needs],
      required: step.required,
      action: planActionToJson(step.action),
    })),
  };
}

/** Plan identity: SHA-256 under DOMAINS.plan (agentscm.skill-workflow-plan.v1) of planToJson. */
export function planDigest(plan: PlanIdentityInput): string {
  return digestCanonical(DOMAINS.plan, planToJson(plan));
}

/** True when some step of the plan is a review step (the review flags are then needed). */
export function planHasReviewSteps(plan: Pick<CompiledPlan, 'steps'>): boolean {
  return plan.steps.some((step) => step.action.kind === 'review');
}

/** True when some step of the plan is a command step (the runtime flags are then needed). */
export function planHasCommandSteps(plan: Pick<CompiledPlan, 'steps'>): boolean {
  return plan.steps.some((step) => step.action.kind === 'command');
}
