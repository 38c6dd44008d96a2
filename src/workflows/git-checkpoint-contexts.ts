/**
 * `agentscm checkpoint --from-git` (docs/git.md "Checkpointing a git commit"): record the tree of a git commit
 * as the Change's next version, then create the review contexts the target's installed requirement needs for
 * it, exactly as a workspace checkpoint does (checkpoint-contexts.ts): the version stays whatever happens to the
 * contexts, and a failure to create them is returned with what to run next.
 */
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { checkpointFromGit, type GitCheckpointInput, type GitCheckpointResult } from '../git/checkpoint-from-git.js';
import type { Store } from '../native/store-handle.js';
import type { CheckpointWithContexts } from './checkpoint-contexts.js';
import { createVersionContexts } from './version-contexts.js';

export type GitCheckpointWithContexts = CheckpointWithContexts & Pick<GitCheckpointResult, 'git'>;

/** Checkpoint the git commit, then create the Change version's contexts for `target` (every context or none). */
export async function gitCheckpointWithContexts(
  store: Store,
  input: GitCheckpointInput & { readonly target: string },
): Promise<GitCheckpointWithContexts> {
  const result = await checkpointFromGit(store, input);
  try {
    const made = createVersionContexts(store, {
      repository: result.repository,
      change: result.change,
      target: input.target,
    });
    return { ...result, ...made, context_error: null };
  } catch (error) {
    const e = isAgentscmError(error)
      ? error
      : new AgentscmError('INTERNAL', error instanceof Error ? error.message : String(error));
    return {
      ...result,
      target: input.target,
      requirement_digest: null,
      contexts: [],
      context_error: {
        code: e.code,
        message: e.message,
        hint:
          `${e.hint === undefined ? '' : `${e.hint}; then `}run \`agentscm checkpoint --change ${result.change} ` +
          `--from-git ${result.git.commit} --target ${input.target}\` again (an unchanged tree makes no new version)`,
      },
    };
  }
}
