/**
 * ExecutorEnrollment and ExecutorRevocation as plain data (docs/wire.md "TaskResultAssertion"):
 * validateScopeAndBinding checks only structural repository/profile/step scope and exact
 * binding; matchesBinding only compares identities. Neither is admission — currency comes from
 * the native registry lookup (src/native/executor-registry.ts), never from caller data.
 */
import { AgentscmError } from '../errors.js';
import type { ExecutorBinding } from '../task/common.js';
import type { WorkflowTaskSubject } from '../task/subject.js';

/** The repository/profile/step an enrollment is scoped to. */
/** The workflow task profile `agent-task enroll` and `agent-task call` use when none is given (docs/agent-tasks.md). */
export const DEFAULT_TASK_PROFILE = 'default';

export interface ExecutorScope {
  readonly repository: string;
  readonly profile: string;
  readonly step: string;
}

/** The enrollment scope a task subject needs: its repository, profile and step. */
export function scopeOfSubject(subject: WorkflowTaskSubject): ExecutorScope {
  return { repository: subject.repository, profile: subject.profile, step: subject.step_id };
}

/** One immutable enrollment epoch of an executor's operator-supplied public key. */
export interface ExecutorEnrollment extends ExecutorScope {
  readonly registration_id: string;
  readonly executor_id: string;
  readonly registration_epoch: bigint;
  /** The 32-byte Ed25519 public key, 64 lowercase hex. */
  readonly public_key: string;
  readonly verification_key_id: string;
}

/** A revocation names the registration it ends. */
export interface ExecutorRevocation {
  readonly registration_id: string;
  readonly executor_id: string;
  readonly registration_epoch: bigint;
  readonly verification_key_id: string;
}

/** The binding an enrollment gives to attempts and observations. */
export function bindingOf(enrollment: ExecutorEnrollment): ExecutorBinding {
  return {
    registration_id: enrollment.registration_id,
    executor_id: enrollment.executor_id,
    registration_epoch: enrollment.registration_epoch,
    verification_key_id: enrollment.verification_key_id,
  };
}

/**
 * ExecutorEnrollment::validate_scope_and_binding: the enrollment is scoped to exactly this
 * repository, profile and step, and the binding names exactly this enrollment. Structural only.
 */
export function validateScopeAndBinding(
  enrollment: ExecutorEnrollment,
  scope: ExecutorScope,
  binding: ExecutorBinding,
): void {
  const scopeField = (['repository', 'profile', 'step'] as const).find((field) => enrollment[field] !== scope[field]);
  if (scopeField !== undefined) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `registration ${enrollment.registration_id} is scoped to ${scopeField} ${enrollment[scopeField]}, not ` +
        `${scope[scopeField]}`,
      {
        details: { field: scopeField },
      },
    );
  }
  const own = bindingOf(enrollment);
  const bindingField = (['registration_id', 'executor_id', 'registration_epoch', 'verification_key_id'] as const).find(
    (field) => own[field] !== binding[field],
  );
  if (bindingField !== undefined) {
    throw new AgentscmError(
      'TASK_BINDING_MISMATCH',
      `the executor binding's ${bindingField} is not registration ${enrollment.registration_id}'s`,
      {
        details: { field: bindingField },
      },
    );
  }
}

/** ExecutorRevocation::matches_binding: identity comparison only. */
export function matchesBinding(revocation: ExecutorRevocation, binding: ExecutorBinding): boolean {
  return (
    revocation.registration_id === binding.registration_id &&
    revocation.executor_id === binding.executor_id &&
    revocation.registration_epoch === binding.registration_epoch &&
    revocation.verification_key_id === binding.verification_key_id
  );
}
