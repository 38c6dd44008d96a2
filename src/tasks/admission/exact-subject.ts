/**
 * The exact subject admission binds (docs/admission.md "The server-executed path"): the fields of
 * a derived subject that an approval, a server-run receipt row and a server-run receipt document
 * all name, built in one place. Canonical JSON keeps insertion order, so the order here is the
 * order a receipt document's `subject` is hashed in: change, version, revision, context, policy
 * epoch, target, requirement (a receipt document then adds the plan digest).
 */
import type { TargetSubject } from '../../contracts/task/subject.js';

/** The exact-subject binding (the target subject) of a derived subject, fields in their hashed order. */
export function exactSubjectBinding(base: TargetSubject): TargetSubject {
  return {
    change_id: base.change_id,
    change_version: base.change_version,
    revision: base.revision,
    context_digest: base.context_digest,
    policy_epoch: base.policy_epoch,
    target: base.target,
    requirement_digest: base.requirement_digest,
  };
}
