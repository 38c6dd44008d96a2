/**
 * `agentscm checkpoint --from-git` (docs/git.md "Checkpointing a git commit"): record the tree of a git commit
 * as the Change's next version, then create the review contexts the target's installed requirement needs for
 * it, exactly as a workspace checkpoint does (checkpoint-contexts.ts): the version stays whatever happens to the
 * contexts, and a failure to create them is returned with what to run next.
 */
import { checkpointFromGit, type GitCheckpointInput, type GitCheckpointResult } from '../git/checkpoint-from-git.js';
import type { Store } from '../native/store-handle.js';
import { withVersionContexts, type CheckpointWithContexts } from './checkpoint-contexts.js';

export type GitCheckpointWithContexts = CheckpointWithContexts & Pick<GitCheckpointResult, 'git'>;

/** Checkpoint the git commit, then create the Change version's contexts for `target` (every context or none). */
export async function gitCheckpointWithContexts(
  store: Store,
  input: GitCheckpointInput & { readonly target: string },
): Promise<GitCheckpointWithContexts> {
  const result = await checkpointFromGit(store, input);
  return withVersionContexts(store, result, input.target, {
    again: `agentscm checkpoint --change ${result.change} --from-git ${result.git.commit} --target ${input.target}`,
    otherwise: '',
  });
}
