/**
 * `agentscm qualification` for the operator (docs/qualification.md "For operators"): the same
 * read-only answer as the facade operation, run in-process against the operator's own data
 * directory. The operator owns the store, so no grant is authenticated; nothing is written, so the
 * local actor is recorded nowhere. Without --context the Change's current version must have
 * exactly one review context at the current policy epoch.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { QualificationAnswer } from '../contracts/qualification.js';
import type { AgentRef } from '../contracts/task-common.js';
import { getChange } from '../native/changes.js';
import { currentPolicyEpoch } from '../native/policy.js';
import { resolveRepository } from '../native/repositories.js';
import { resolveContextRef } from '../native/review-contexts.js';
import { u64ToSql } from '../native/sqlite.js';
import { prepared } from '../native/store.js';
import type { Authority } from '../native/store.js';
import { trustedLocalGuard } from './context.js';
import { qualifyResolved } from './qualification.js';

/** The actor of the operator's in-process read (never written anywhere). */
const OPERATOR: AgentRef = { owner_id: 'operator', agent_id: 'local' };

/** A full context digest is taken as given (qualification answers CONTEXT_NOT_FOUND for an unknown one); anything else is a prefix. */
const FULL_DIGEST = /^[0-9a-f]{64}$/;

export interface LocalQualificationInput {
  readonly dataDir: string;
  readonly repository?: string | undefined;
  readonly profile: string;
  readonly target: string;
  readonly change: string;
  /** Review context digest; undefined → the one context of the Change's current version. */
  readonly context?: string | undefined;
}

/**
 * The only review context of the Change's current version at the current policy epoch, read
 * inside the caller's transaction (this command and the agent-owned Stop hook):
 * CONTEXT_NOT_FOUND when there is none, USAGE when there are several.
 */
export function soleCurrentContext(auth: Authority, repository: string, changeId: string): string {
  const change = getChange(auth, repository, changeId);
  const rows = prepared(auth, 'SELECT context_digest FROM review_contexts WHERE repository = ? AND change_id = ? AND change_version = ? AND revision = ? AND policy_epoch = ? ORDER BY context_digest LIMIT 2').all(
    repository,
    change.id,
    u64ToSql(change.current_version),
    change.current_revision,
    u64ToSql(currentPolicyEpoch(auth, repository)),
  ) as { context_digest: string }[];
  const [first, second] = rows;
  if (first === undefined) {
    throw new AgentscmError('CONTEXT_NOT_FOUND', `Change ${change.id} has no review context for its current version ${change.current_version}`, {
      hint: 'create one with `agentscm context create --change ID --runner PATH`, or pass --context DIGEST',
    });
  }
  if (second !== undefined) {
    throw new AgentscmError('USAGE', `Change ${change.id} has more than one review context for its current version ${change.current_version}`, {
      hint: 'pass --context DIGEST to name the subject to qualify',
    });
  }
  return first.context_digest;
}

/**
 * Qualify a subject of the operator's data directory (read-only; opens existing stores only). The
 * default or abbreviated context is resolved in the same authority snapshot as the answer.
 */
export function qualifyLocal(input: LocalQualificationInput): QualificationAnswer {
  const ctx = { dataDir: input.dataDir, actor: OPERATOR, repository: input.repository, profile: input.profile, target: input.target, guard: trustedLocalGuard };
  return qualifyResolved(ctx, (auth) => {
    const reference = input.context;
    if (reference !== undefined && FULL_DIGEST.test(reference)) return { change_id: input.change, context_digest: reference };
    const repository = resolveRepository(auth, input.repository).id;
    return { change_id: input.change, context_digest: reference === undefined ? soleCurrentContext(auth, repository, input.change) : resolveContextRef(auth, repository, reference) };
  });
}
