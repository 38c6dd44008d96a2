/**
 * Compile-time binding of a command step (spec: "The compiler loads that exact resource from
 * the immutable revision and requires a real, existing, current Change and command/v1
 * ReviewContext that bind the same revision, policy epoch, recipe, toolchain and environment").
 */
import { decodeCommandRecipe, type CommandRecipe } from '../contracts/collector/command-recipe.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import type { CommandAction, WorkflowSource } from '../contracts/workflow-definition.js';
import { getChange } from '../native/changes.js';
import { checkCommandContext } from '../native/review-contexts.js';
import { revisionHasDirectory } from '../native/revisions.js';
import type { Authority } from '../native/store.js';

export interface CommandBindingInput {
  readonly stepId: string;
  readonly source: WorkflowSource;
  readonly action: CommandAction;
  readonly recipePath: string;
  readonly recipeBytes: Uint8Array;
  readonly recipeSha256: string;
  /** False when the workdir was already checked against this (immutable) revision. */
  readonly checkWorkdir?: boolean;
}

function stale(stepId: string, message: string, hint: string, details: Record<string, unknown> = {}): AgentscmError {
  return new AgentscmError('WORKFLOW_COMMAND_STALE', `step "${stepId}": ${message}`, {
    hint,
    details: { step: stepId, ...details },
  });
}

/** Decode the packaged recipe; a malformed recipe is WORKFLOW_COMMAND_INVALID naming the step. */
export function decodeStepRecipe(stepId: string, recipePath: string, bytes: Uint8Array): CommandRecipe {
  try {
    return decodeCommandRecipe(bytes);
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    throw new AgentscmError(
      'WORKFLOW_COMMAND_INVALID',
      `step "${stepId}": recipe "${recipePath}" is not a valid CommandRecipe: [${error.code}] ${error.message}`,
      {
        hint: 'fix the recipe resource in the revision; see docs/command-collector.md',
        details: { step: stepId, recipe_path: recipePath, cause_code: error.code },
        cause: error,
      },
    );
  }
}

/**
 * The recipe's working directory must be a directory of the revision (it holds at least one
 * entry); "." always is. RECIPE_WORKDIR_MISSING otherwise — found when the workflow is
 * planned, not when its container would start. Call inside a read snapshot of the authority.
 */
export function checkRecipeWorkdir(
  auth: Authority,
  repository: string,
  revision: string,
  workdir: string,
  stepId: string | null = null,
): void {
  if (workdir === '.') return;
  if (revisionHasDirectory(auth, repository, revision, workdir)) return;
  throw new AgentscmError(
    'RECIPE_WORKDIR_MISSING',
    `${stepId === null ? '' : `step "${stepId}": `}recipe workdir ${JSON.stringify(workdir)} ` +
      `is not a directory of revision ${revision}`,
    {
      hint: 'point workdir at a directory that holds files in the revision, or "."',
      details: { ...(stepId === null ? {} : { step: stepId }), workdir },
    },
  );
}

/** Check a command step against the authority; call inside the compile read snapshot. */
export function validateCommandBinding(auth: Authority, input: CommandBindingInput): void {
  const { stepId, source, action } = input;
  const recipe = decodeStepRecipe(stepId, input.recipePath, input.recipeBytes);
  if (input.checkWorkdir !== false)
    checkRecipeWorkdir(auth, source.repository, source.revision, recipe.workdir, stepId);
  const change = getChange(auth, action.change.repository, action.change.id);
  if (change.current_version !== action.change_version) {
    throw stale(
      stepId,
      `Change ${action.change.id} is at version ${change.current_version}, not ${action.change_version}`,
      'bind the current Change version',
      {
        current_version: change.current_version.toString(),
      },
    );
  }
  if (change.current_revision !== source.revision) {
    throw stale(
      stepId,
      `Change ${action.change.id} version ${change.current_version} is revision ${change.current_revision}, ` +
        `not the workflow's revision ${source.revision}`,
      "bind the workflow to the Change's current revision",
    );
  }
  // CONTEXT_NOT_FOUND / CONTEXT_MISMATCH / CONTEXT_STALE name exactly which binding differs.
  checkCommandContext(auth, {
    repository: source.repository,
    contextDigest: action.context_digest,
    change: action.change,
    changeVersion: action.change_version,
    revision: source.revision,
    policyEpoch: source.policy_epoch,
    recipeDigest: input.recipeSha256,
    toolchain: recipe.toolchain,
    environment: recipe.environment,
    recipePath: input.recipePath,
  });
}
