/**
 * `agentscm checkpoint` (docs/workspace.md "Contexts of the new version"): checkpoint the
 * workspace, then create the review contexts the target's installed requirement needs for the
 * Change's current version. The checkpoint is committed first and stays whatever happens to the
 * contexts; a failure to create them is returned (not thrown) with what to run next, so the
 * command prints the checkpoint and the failure and exits with the failure's code.
 */
import { AgentscmError, isAgentscmError, type ErrorCode } from '../contracts/errors.js';
import type { Store } from '../native/store-handle.js';
import { checkpointWorkspace, type CheckpointInput, type CheckpointResult } from '../workspace/checkpoint.js';
import { createVersionContexts, type VersionContext } from './version-contexts.js';

/** Why the contexts were not created (nothing of them was written). */
export interface ContextFailure {
  readonly code: ErrorCode;
  readonly message: string;
  readonly hint: string;
}

/** The contexts part of a checkpoint's result. */
export interface VersionContextsOutcome {
  readonly target: string;
  /** The target's installed requirement, or null when it has none (or on a failure). */
  readonly requirement_digest: string | null;
  /** One per distinct recipe path of the requirement's command steps; empty on a failure. */
  readonly contexts: VersionContext[];
  /** Null when the contexts were created (or none was needed). */
  readonly context_error: ContextFailure | null;
}

export interface CheckpointWithContexts extends CheckpointResult, VersionContextsOutcome {}

/**
 * Create the contexts of the Change version `result` just recorded (every context or none). A failure is returned,
 * its hint ending with `run \`again\` again` and then `otherwise` (another way forward, or nothing).
 */
export function withVersionContexts<R extends { readonly repository: string; readonly change: string }>(
  store: Store,
  result: R,
  target: string,
  rerun: { readonly again: string; readonly otherwise: string },
): R & VersionContextsOutcome {
  try {
    const made = createVersionContexts(store, { repository: result.repository, change: result.change, target });
    return { ...result, ...made, context_error: null };
  } catch (error) {
    const e = isAgentscmError(error)
      ? error
      : new AgentscmError('INTERNAL', error instanceof Error ? error.message : String(error));
    return {
      ...result,
      target,
      requirement_digest: null,
      contexts: [],
      context_error: {
        code: e.code,
        message: e.message,
        hint:
          `${e.hint === undefined ? '' : `${e.hint}; then `}run \`${rerun.again}\` again (an unchanged tree makes no ` +
          `new version)${rerun.otherwise}`,
      },
    };
  }
}

/** Checkpoint, then create the Change version's contexts for `target` (every context or none). */
export function checkpointWithContexts(
  store: Store,
  input: CheckpointInput & { readonly target: string },
): CheckpointWithContexts {
  const result = checkpointWorkspace(store, input);
  return withVersionContexts(store, result, input.target, {
    again: `agentscm checkpoint --change ${result.change} --target ${input.target}`,
    otherwise: ` or \`agentscm context create --change ${result.change} --runner PATH\``,
  });
}
