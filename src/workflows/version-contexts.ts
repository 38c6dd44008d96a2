/**
 * The review contexts a Change version needs for a target's installed requirement
 * (docs/workspace.md "Contexts of the new version"): one command/v1 context per distinct recipe
 * path of the requirement's command steps (the skill directory joined with the step's `runner`),
 * created idempotently for the Change's current version at the current policy epoch. Review and
 * source-path steps bind no context: a context is command/v1 only (it binds a recipe), so a
 * requirement without command steps needs none.
 */
import { AgentscmError } from '../contracts/errors.js';
import { quoteForMessage } from '../contracts/message-text.js';
import { findTargetRequirement } from '../native/requirements.js';
import { createReviewContext } from '../native/review-contexts.js';
import type { Store } from '../native/store-handle.js';
import { writeTransaction, type Authority } from '../native/store.js';
import { listTargets } from '../native/targets.js';
import { compileStructure } from './plan.js';
import { requirementDefinition } from './requirement.js';
import { resolvePackagePath } from './skill-package.js';

/** One created (or found) context: the recipe it binds and the command steps that run that recipe. */
export interface VersionContext {
  readonly context_digest: string;
  readonly recipe_path: string;
  /** The command steps whose runner resolves to recipe_path, in declared order. */
  readonly steps: string[];
  /** False when the identical context already existed. */
  readonly created: boolean;
}

export interface VersionContextsResult {
  readonly target: string;
  /** The target's installed requirement, or null when it has none. */
  readonly requirement_digest: string | null;
  /** In recipe-path order of first use; empty without a requirement or without command steps. */
  readonly contexts: VersionContext[];
}

/** A target the repository does not have is TARGET_NOT_FOUND (not "no requirement"). */
export function checkTargetExists(auth: Authority, repository: string, target: string): void {
  const targets = listTargets(auth, repository).map((t) => t.name);
  if (targets.includes(target)) return;
  throw new AgentscmError('TARGET_NOT_FOUND', `the repository has no target ${quoteForMessage(target)}`, {
    hint: targets.length === 0 ? 'the repository has no targets' : `its targets: ${targets.join(', ')}`,
  });
}

/** The distinct recipe paths of a requirement's command steps, each with the steps that use it. */
function recipeSteps(
  auth: Authority,
  repository: string,
  target: string,
): {
  requirement: string | null;
  recipes: Map<string, string[]>;
} {
  const requirement = findTargetRequirement(auth, repository, target);
  const recipes = new Map<string, string[]>();
  if (requirement === null) return { requirement: null, recipes };
  const structure = compileStructure(requirementDefinition(requirement));
  for (const step of structure.definition.steps) {
    if (step.action.kind !== 'command') continue;
    const path = resolvePackagePath(structure.layout, step.action.runner);
    recipes.set(path, [...(recipes.get(path) ?? []), step.id]);
  }
  return { requirement: requirement.requirement_digest, recipes };
}

/**
 * Create the review contexts of the Change's current version for the target's requirement, all
 * in one write transaction (every context or none). Idempotent: an identical context is found,
 * not duplicated. A repository id is expected (the checkpoint's).
 */
export function createVersionContexts(
  store: Store,
  input: { readonly repository: string; readonly change: string; readonly target: string },
): VersionContextsResult {
  const auth = store.authority();
  return writeTransaction(auth, () => {
    checkTargetExists(auth, input.repository, input.target);
    const { requirement, recipes } = recipeSteps(auth, input.repository, input.target);
    const contexts = [...recipes].map(([recipePath, steps]): VersionContext => {
      const made = createReviewContext(auth, {
        repository: input.repository,
        changeId: input.change,
        runnerPath: recipePath,
      });
      return { context_digest: made.context_digest, recipe_path: recipePath, steps, created: made.created };
    });
    return { target: input.target, requirement_digest: requirement, contexts };
  });
}
