/**
 * `subject` (docs/hub.md "MCP"): the current subject of a Change, read from its id alone — the
 * Change's current version and revision, the digest of the review context of that version (the
 * one at the current policy epoch that the target's installed requirement binds), the target and
 * the requirement digest. An agent that knows only the Change id reads here what `next`, `claim`
 * and `qualification` need. Read-only.
 */
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import type { SubjectRequest } from '../../contracts/task/requests.js';
import { subjectToJson } from '../../contracts/task/subject.js';
import { resolveRepository } from '../../native/repositories.js';
import { targetSubjectRecipe } from '../../native/requirements.js';
import { soleCurrentContext } from '../../native/review-contexts.js';
import type { Authority } from '../../native/store.js';
import type { TaskContext } from '../context.js';
import { deriveSubject } from '../derive.js';
import { readAuthority } from '../transition.js';

/**
 * The digest of the current review context of a Change for the context's target: the one context of its current
 * version at the current policy epoch (the one whose recipe the target's requirement binds, when there are several).
 * CHANGE_NOT_FOUND, CONTEXT_NOT_FOUND or CONTEXT_AMBIGUOUS otherwise, each with its own hint.
 */
export function currentContextDigest(ctx: TaskContext, changeId: string): string {
  return readAuthority(ctx, (auth) => contextIn(auth, ctx, changeId));
}

function contextIn(auth: Authority, ctx: TaskContext, changeId: string): string {
  const repository = resolveRepository(auth, ctx.repository).id;
  return soleCurrentContext(auth, repository, changeId, () => targetSubjectRecipe(auth, repository, ctx.target));
}

/** The operation: the subject fields every task of the Change's current subject shares. */
export function subjectOperation(ctx: TaskContext, request: SubjectRequest): JsonValue {
  return ctx.guard(ctx.actor, 'subject', () =>
    readAuthority(ctx, (auth) => {
      const contextDigest = contextIn(auth, ctx, request.change_id);
      const derived = deriveSubject(auth, {
        repository: ctx.repository,
        profile: ctx.profile,
        target: ctx.target,
        change_id: request.change_id,
        context_digest: contextDigest,
      });
      const { step_id: _step, ...base } = subjectToJson({ ...derived.base, step_id: 'x' });
      return base satisfies JsonObject;
    }),
  );
}
