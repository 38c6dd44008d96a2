/**
 * Observation signing bytes (docs/keys-and-enrollment.md "Observation signatures"): clone the validated assertion,
 * set executor_provenance to null (written, not omitted), encode canonically in declared field
 * order, digest with domain agentscm.agent-workflow-observation.v1, and sign the 32 raw digest
 * bytes with Ed25519 (signature 128 lowercase hex). Verification is strict.
 */
import { publicKeyOf, publicKeyProblem, signBytes, verificationKeyId, verifyStrict } from '../../crypto/ed25519.js';
import { domainDigest, DOMAINS } from '../digest.js';
import { AgentscmError } from '../errors.js';
import { encodeCanonical } from '../json/canonical-json.js';
import { hexToBytes } from '../task/common.js';
import { assertionToJson, checkAssertion, type ExecutorProvenance, type TaskResultAssertion } from '../task/result.js';

/** The exact signing bytes: the assertion with executor_provenance null, canonical declared order. */
export function observationSigningBytes(assertion: TaskResultAssertion): Uint8Array {
  return encodeCanonical(assertionToJson(assertion, null));
}

/** The observation digest (64 lowercase hex) over the signing bytes. */
export function observationDigest(assertion: TaskResultAssertion): string {
  return domainDigest(DOMAINS.observation, observationSigningBytes(assertion));
}

function requireRegisteredObservation(assertion: TaskResultAssertion): void {
  checkAssertion(assertion);
  if (assertion.trust_class !== 'registered_executor_observation' || assertion.executor === null) {
    throw new AgentscmError(
      'TRUST_CLASS_INVALID',
      `only a registered_executor_observation is signed; this assertion is ${assertion.trust_class}`,
      {
        hint: 'set trust_class to registered_executor_observation and fill executor with the enrollment',
      },
    );
  }
}

/**
 * Sign a registered observation with a 32-byte private key seed: returns the assertion with
 * executor_provenance filled. The key must be the one the executor binding names.
 */
export function signObservation(assertion: TaskResultAssertion, privateKey: Uint8Array): TaskResultAssertion {
  requireRegisteredObservation(assertion);
  const keyId = verificationKeyId(publicKeyOf(privateKey));
  if (assertion.executor?.verification_key_id !== keyId) {
    throw new AgentscmError(
      'SIGNING_KEY_MISMATCH',
      `the key ${keyId} is not the verification key ${assertion.executor?.verification_key_id ?? 'null'} the ` +
        `observation names`,
      {
        hint: 'sign with the key file whose public key was enrolled for this registration',
      },
    );
  }
  const digest = observationDigest(assertion);
  const signature = Buffer.from(signBytes(hexToBytes(digest), privateKey)).toString('hex');
  const provenance: ExecutorProvenance = { observation_digest: digest, signature };
  return { ...assertion, executor_provenance: provenance };
}

/** What a successful verification established. */
export interface ObservationVerification {
  readonly valid: true;
  readonly observation_digest: string;
  readonly verification_key_id: string;
}

function invalid(reason: string, message: string): never {
  throw new AgentscmError('SIGNATURE_INVALID', message, { details: { reason } });
}

/**
 * Verify a registered observation under `publicKey` (docs/keys-and-enrollment.md
 * "Observation signatures": registered observations are accepted only after strict Ed25519
 * verification over the observation digest): the key is
 * valid and is the one the executor binding names, observation_digest equals the recomputed
 * digest, and the signature verifies strictly over the 32 raw digest bytes. Throws
 * SIGNATURE_INVALID (exit 1) otherwise. This is not admission: enrollment currency is separate.
 */
export function verifyObservation(assertion: TaskResultAssertion, publicKey: Uint8Array): ObservationVerification {
  requireRegisteredObservation(assertion);
  const problem = publicKeyProblem(publicKey);
  if (problem !== undefined) {
    throw new AgentscmError('PUBLIC_KEY_INVALID', `the public key is unusable: ${problem}`, {
      hint: 'pass the 64-hex public key printed by agent-task key',
    });
  }
  const keyId = verificationKeyId(publicKey);
  const provenance = assertion.executor_provenance;
  if (provenance === null) invalid('unsigned', 'the observation has no executor_provenance (it was never signed)');
  if (assertion.executor?.verification_key_id !== keyId) {
    invalid(
      'key_mismatch',
      `the observation names verification_key_id ${assertion.executor?.verification_key_id ?? 'null'}, but the given ` +
        `public key's verification_key_id is ${keyId}`,
    );
  }
  const digest = observationDigest(assertion);
  if (provenance.observation_digest !== digest) {
    invalid(
      'digest_mismatch',
      `observation_digest ${provenance.observation_digest} is not the digest of the signing bytes (${digest})`,
    );
  }
  if (!verifyStrict(hexToBytes(provenance.signature), hexToBytes(digest), publicKey)) {
    invalid('signature', 'the Ed25519 signature does not verify under strict RFC 8032 rules');
  }
  return { valid: true, observation_digest: digest, verification_key_id: keyId };
}
