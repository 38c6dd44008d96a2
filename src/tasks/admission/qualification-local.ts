/**
 * `agentscm qualification` for the operator (docs/qualification.md "For operators"): the same
 * read-only answer as the facade operation, run in-process against the operator's own data
 * directory. The operator owns the store, so no grant is authenticated; nothing is written, so the
 * local actor is recorded nowhere. Without --context the Change's current version must have
 * exactly one review context at the current policy epoch.
 */
import type { AgentRef } from '../../contracts/task/common.js';
import type { QualificationAnswer } from '../../contracts/task/qualification.js';
import { resolveRepository } from '../../native/repositories.js';
import { targetSubjectRecipe } from '../../native/requirements.js';
import { resolveContextRef, soleCurrentContext } from '../../native/review-contexts.js';
import type { Store } from '../../native/store-handle.js';
import { trustedLocalGuard } from '../context.js';
import { qualifyResolved } from './qualification.js';

// The sole-context read is the native layer's (the Stop hook reads it without this module's graph).
export { soleCurrentContext } from '../../native/review-contexts.js';

/** The actor of the operator's in-process read (never written anywhere). */
const OPERATOR: AgentRef = { owner_id: 'operator', agent_id: 'local' };

/**
 * A full context digest is taken as given (qualification answers CONTEXT_NOT_FOUND for an unknown one); anything else
 * is a prefix.
 */
const FULL_DIGEST = /^[0-9a-f]{64}$/;

export interface LocalQualificationInput {
  readonly repository?: string | undefined;
  readonly profile: string;
  readonly target: string;
  readonly change: string;
  /** Review context digest; undefined → the one context of the Change's current version. */
  readonly context?: string | undefined;
  /** The agent's token file: the answer's next then carries the exact command lines to run. */
  readonly tokenFile?: string | undefined;
}

/**
 * Qualify a subject of the operator's store (read snapshots only: a command opens the store for
 * reading, so existing files only; the hub's dashboard passes its own). The default or abbreviated
 * context is resolved in the same authority snapshot as the answer.
 */
export function qualifyLocal(store: Store, input: LocalQualificationInput): QualificationAnswer {
  const ctx = {
    store,
    actor: OPERATOR,
    repository: input.repository,
    profile: input.profile,
    target: input.target,
    guard: trustedLocalGuard,
  };
  return qualifyResolved(
    ctx,
    (auth) => {
      const reference = input.context;
      if (reference !== undefined && FULL_DIGEST.test(reference))
        return { change_id: input.change, context_digest: reference };
      const repository = resolveRepository(auth, input.repository).id;
      return {
        change_id: input.change,
        context_digest:
          reference === undefined
            ? soleCurrentContext(auth, repository, input.change, () =>
                targetSubjectRecipe(auth, repository, input.target),
              )
            : resolveContextRef(auth, repository, reference),
      };
    },
    { tokenFile: input.tokenFile },
  );
}
