/**
 * The executor registry of the native authority (docs/keys-and-enrollment.md "Enroll and revoke"): bounded
 * operator-supplied Ed25519 public keys, immutable repository/profile/step-scoped enrollment
 * epochs and revocations. These administrative methods generate no keys or credentials. The
 * current-registration lookup reads the full binding and revocation state from the authority;
 * no caller-provided epoch or revocation can establish currency, and re-enrollment (a new epoch)
 * never rehabilitates evidence bound to an older one.
 */
import {
  bindingOf,
  validateScopeAndBinding,
  type ExecutorEnrollment,
  type ExecutorScope,
} from '../contracts/collector/executor-enrollment.js';
import { verifyObservation, type ObservationVerification } from '../contracts/collector/observation.js';
import { AgentscmError } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { parsePublicKeyHex } from '../contracts/key-file.js';
import { sameExecutor, type ExecutorBinding } from '../contracts/task/common.js';
import type { TaskResultAssertion } from '../contracts/task/result.js';
import { decodeWorkflowDefinition } from '../contracts/workflow-definition.js';
import { verificationKeyId } from '../crypto/ed25519.js';
import { sha256Hex } from '../crypto/sha256.js';
import { getRepository, resolveRepository, type Repository } from './repositories.js';
import { listTargetRequirements } from './requirements.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { prepared, readTransaction, writeTransaction, type Authority } from './store.js';

/** An enrollment plus its authoritative revocation and supersession state. */
export interface RegistrationState extends ExecutorEnrollment {
  readonly revoked: boolean;
  readonly revocation_reason: string | null;
  /** The newest epoch enrolled for the same repository/profile/step/executor. */
  readonly latest_epoch: bigint;
  /** Not revoked and the newest epoch of its scope: the only state that may admit new evidence. */
  readonly current: boolean;
}

export interface EnrollInput {
  /** Repository id or name; omitted → the only repository of the store. */
  readonly repository?: string;
  readonly profile: string;
  readonly step: string;
  readonly executor: string;
  /** Operator-supplied Ed25519 public key, 64 lowercase hex. */
  readonly public_key: string;
}

export interface EnrollResult {
  readonly registration_id: string;
  readonly registration_epoch: bigint;
  readonly verification_key_id: string;
  readonly repository: string;
  readonly profile: string;
  readonly step: string;
  readonly executor_id: string;
  readonly public_key: string;
  /** Epoch this one supersedes (null for a first enrollment). */
  readonly supersedes_epoch: bigint | null;
  /** What the operator should know, e.g. that no installed requirement has the step (docs/keys-and-enrollment.md). */
  readonly warnings: string[];
}

export interface RevokeResult {
  readonly registration_id: string;
  readonly revoked: true;
  /** True when the registration had been revoked before; nothing changed. */
  readonly already_revoked: boolean;
}

/** Longest revocation reason in UTF-8 bytes. */
export const MAX_REVOCATION_REASON_BYTES = 1024;

interface RegistrationRow {
  registration_id: string;
  repository: string;
  profile: string;
  step: string;
  executor_id: string;
  registration_epoch: string;
  public_key: string;
  verification_key_id: string;
  revoked: number;
  reason: string | null;
  latest_epoch: string;
}

const SELECT_STATE = `
  SELECT r.registration_id, r.repository, r.profile, r.step, r.executor_id, r.registration_epoch,
         r.public_key, r.verification_key_id,
         (v.registration_id IS NOT NULL) AS revoked, v.reason AS reason,
         (SELECT max(l.registration_epoch) FROM executor_registrations l
           WHERE l.repository = r.repository AND l.profile = r.profile AND l.step = r.step
             AND l.executor_id = r.executor_id) AS latest_epoch
    FROM executor_registrations r
    LEFT JOIN executor_revocations v ON v.registration_id = r.registration_id`;

function stateOf(row: RegistrationRow): RegistrationState {
  const epoch = u64FromSql(row.registration_epoch);
  const latest = u64FromSql(row.latest_epoch);
  const revoked = row.revoked === 1;
  return {
    registration_id: row.registration_id,
    repository: row.repository,
    profile: row.profile,
    step: row.step,
    executor_id: row.executor_id,
    registration_epoch: epoch,
    public_key: row.public_key,
    verification_key_id: row.verification_key_id,
    revoked,
    revocation_reason: row.reason,
    latest_epoch: latest,
    current: !revoked && epoch === latest,
  };
}

/** Deterministic registration id of one scope and epoch (so a reader can recompute it). */
function registrationIdOf(repository: string, profile: string, step: string, executor: string, epoch: bigint): string {
  const digest = sha256Hex(
    encodeCanonical(['agentscm.executor-registration.v1', repository, profile, step, executor, epoch]),
  );
  return `reg-${digest.slice(0, 32)}`;
}

/**
 * Enroll an operator-supplied public key for one repository/profile/step/executor scope
 * (docs/keys-and-enrollment.md "Enroll and revoke"): a new immutable epoch, one above the newest
 * of that scope.
 */
export function enrollExecutor(auth: Authority, input: EnrollInput): EnrollResult {
  const profile = validateId(input.profile, 'profile');
  const step = validateId(input.step, 'step');
  const executor = validateId(input.executor, 'executor');
  const publicKey = parsePublicKeyHex(input.public_key);
  const keyId = verificationKeyId(publicKey);
  return writeTransaction(auth, () => {
    const record = resolveRepository(auth, input.repository);
    const repository = record.id;
    const warnings = stepWarnings(auth, record, step);
    const latest = prepared(
      auth,
      'SELECT max(registration_epoch) AS epoch FROM executor_registrations WHERE repository = ? AND profile = ? ' +
        'AND step = ? AND executor_id = ?',
    ).get(repository, profile, step, executor) as { epoch: string | null };
    const previous = latest.epoch === null ? null : u64FromSql(latest.epoch);
    if (previous === 18446744073709551615n) throw new AgentscmError('INTERNAL', 'registration epoch exhausted');
    const epoch = (previous ?? 0n) + 1n;
    const registrationId = registrationIdOf(repository, profile, step, executor, epoch);
    const seq = (
      prepared(auth, 'SELECT coalesce(max(seq), 0) + 1 AS next FROM executor_registrations').get() as { next: number }
    ).next;
    prepared(
      auth,
      `INSERT INTO executor_registrations (registration_id, repository, profile, step, executor_id,
        registration_epoch, public_key, verification_key_id, seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(registrationId, repository, profile, step, executor, u64ToSql(epoch), input.public_key, keyId, seq);
    return {
      registration_id: registrationId,
      registration_epoch: epoch,
      verification_key_id: keyId,
      repository,
      profile,
      step,
      executor_id: executor,
      public_key: input.public_key,
      supersedes_epoch: previous,
      warnings,
    };
  });
}

/**
 * A registration for a step no installed requirement has is recorded (a requirement may be
 * installed later) but never used until then: say so (docs/keys-and-enrollment.md).
 */
function stepWarnings(auth: Authority, repository: Repository, step: string): string[] {
  const installed = listTargetRequirements(auth, repository.id);
  const steps = new Set<string>();
  for (const requirement of installed) {
    try {
      for (const s of decodeWorkflowDefinition(requirement.definition).steps) steps.add(s.id);
    } catch {
      // A retained definition this build cannot decode names no step we could match.
    }
  }
  if (steps.has(step)) return [];
  const known = [...steps].sort();
  const where =
    installed.length === 0
      ? `repository ${repository.name} has no installed workflow requirement`
      : `no installed workflow requirement of repository ${repository.name} has a step "${step}" (its steps: ` +
        `${known.join(', ')})`;
  return [
    `${where}; the registration is recorded, but no task uses it until a requirement with step "${step}" is installed`,
  ];
}

/** "repository demo (ID), profile P, step S, executor E": every registration error names its whole scope. */
function scopeText(auth: Authority, scope: ExecutorScope, executor: string): string {
  let repository = scope.repository;
  try {
    repository = `${getRepository(auth, scope.repository).name} (${scope.repository})`;
  } catch (error) {
    if (!(error instanceof AgentscmError)) throw error;
  }
  return `repository ${repository}, profile ${scope.profile}, step ${scope.step}, executor ${executor}`;
}

/** Revoke a registration (immutable; revoking twice changes nothing and says so). */
export function revokeRegistration(
  auth: Authority,
  registrationId: string,
  reason: string | null = null,
): RevokeResult {
  validateId(registrationId, 'registration id');
  if (reason !== null && Buffer.byteLength(reason, 'utf8') > MAX_REVOCATION_REASON_BYTES) {
    throw new AgentscmError(
      'SCHEMA_BOUND',
      `the revocation reason is longer than ${MAX_REVOCATION_REASON_BYTES} bytes`,
    );
  }
  return writeTransaction(auth, () => {
    const state = getRegistration(auth, registrationId);
    if (state.revoked) return { registration_id: registrationId, revoked: true, already_revoked: true };
    const seq = (
      prepared(auth, 'SELECT coalesce(max(seq), 0) + 1 AS next FROM executor_revocations').get() as { next: number }
    ).next;
    prepared(auth, 'INSERT INTO executor_revocations (registration_id, reason, seq) VALUES (?, ?, ?)').run(
      registrationId,
      reason,
      seq,
    );
    return { registration_id: registrationId, revoked: true, already_revoked: false };
  });
}

/** One registration with its revocation and supersession state (REGISTRATION_NOT_FOUND). */
export function getRegistration(auth: Authority, registrationId: string): RegistrationState {
  return readTransaction(auth, () => {
    const row = prepared(auth, `${SELECT_STATE} WHERE r.registration_id = ?`).get(registrationId) as
      RegistrationRow | undefined;
    if (row === undefined) {
      throw new AgentscmError('REGISTRATION_NOT_FOUND', `no executor registration ${registrationId}`, {
        hint: '`agentscm agent-task registration list` shows the registrations; enroll the executor first',
      });
    }
    return stateOf(row);
  });
}

/**
 * The current-registration lookup (spec: "loads the full authoritative binding and revocation
 * state"): the newest epoch of the scope with its revocation state, or null if the executor was
 * never enrolled there. `current` is false when that newest epoch is revoked; an older epoch is
 * never current.
 */
export function currentRegistration(
  auth: Authority,
  scope: ExecutorScope & { readonly executor: string },
): RegistrationState | null {
  return readTransaction(auth, () => {
    const row = prepared(
      auth,
      `${SELECT_STATE} WHERE r.repository = ? AND r.profile = ? AND r.step = ? AND r.executor_id = ? ORDER BY ` +
        `r.registration_epoch DESC LIMIT 1`,
    ).get(scope.repository, scope.profile, scope.step, scope.executor) as RegistrationRow | undefined;
    return row === undefined ? null : stateOf(row);
  });
}

/**
 * Admission-side check (callers run it inside their own authority transaction): the binding is
 * exactly the newest, unrevoked registration of the scope. Returns it (its public key verifies
 * the observation); REGISTRATION_NOT_CURRENT otherwise.
 */
export function requireCurrentRegistration(
  auth: Authority,
  scope: ExecutorScope,
  binding: ExecutorBinding,
): RegistrationState {
  const state = currentRegistration(auth, { ...scope, executor: binding.executor_id });
  const details = {
    registration_id: binding.registration_id,
    repository: scope.repository,
    profile: scope.profile,
    step: scope.step,
    executor_id: binding.executor_id,
  };
  const notCurrent = (why: string): never => {
    throw new AgentscmError(
      'REGISTRATION_NOT_CURRENT',
      `executor registration ${binding.registration_id} (${scopeText(auth, scope, binding.executor_id)}) is not ` +
        `current: ${why}`,
      {
        hint:
          'enroll the executor again and make a fresh attempt; evidence under an old or revoked registration ' +
          'never counts; `agentscm agent-task registration list` shows the registrations',
        details,
      },
    );
  };
  if (state === null) {
    throw new AgentscmError(
      'REGISTRATION_NOT_CURRENT',
      `executor ${binding.executor_id} is not enrolled for ${scopeText(auth, scope, binding.executor_id)}`,
      {
        hint:
          `enroll it with \`agentscm agent-task enroll --repository ${scope.repository} --profile ` +
          `${scope.profile} --step ${scope.step} --executor ${binding.executor_id} --public-key HEX\`, or call ` +
          `with the --profile it was enrolled for; \`agentscm agent-task registration list\` shows ` +
          `the registrations`,
        details,
      },
    );
  }
  if (state.registration_id !== binding.registration_id || !sameExecutor(bindingOf(state), binding)) {
    return notCurrent(
      state.registration_epoch > binding.registration_epoch
        ? `superseded by epoch ${state.registration_epoch}`
        : 'the binding does not match the enrolled registration',
    );
  }
  validateScopeAndBinding(state, scope, binding);
  if (state.revoked) return notCurrent('it was revoked');
  return state;
}

/**
 * Registered-observation check against the authority
 * (docs/keys-and-enrollment.md "Observation signatures": accepted only after the current enrollment
 * lookup and strict Ed25519 verification): the executor binding is the current registration of the
 * scope, and the signature verifies under that registration's stored public key. Task/attempt/fence
 * binding is the caller's validateAssertionForTask. Run it inside the caller's authority
 * transaction.
 */
export function verifyCurrentObservation(
  auth: Authority,
  scope: ExecutorScope,
  assertion: TaskResultAssertion,
): ObservationVerification & { readonly registration: RegistrationState } {
  if (assertion.trust_class !== 'registered_executor_observation' || assertion.executor === null) {
    throw new AgentscmError(
      'TRUST_CLASS_INVALID',
      `only a registered_executor_observation is verified against the registry, not ${assertion.trust_class}`,
    );
  }
  const registration = requireCurrentRegistration(auth, scope, assertion.executor);
  const verified = verifyObservation(assertion, new Uint8Array(Buffer.from(registration.public_key, 'hex')));
  return { ...verified, registration };
}

/** Every registration of a repository with its state, oldest first (operator listing). */
export function listRegistrations(auth: Authority, repository: string): RegistrationState[] {
  return readTransaction(auth, () =>
    (prepared(auth, `${SELECT_STATE} WHERE r.repository = ? ORDER BY r.seq`).all(repository) as RegistrationRow[]).map(
      stateOf,
    ),
  );
}
