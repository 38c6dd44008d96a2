/**
 * Observation debugging for operators and agents (`agentscm agent-task observation-digest |
 * sign-observation | verify-observation`): read one assertion file (or stdin for `-`), bounded
 * at 256 KiB before it is parsed, and run the pure signing functions of
 * src/contracts/collector/observation.ts over it.
 */
import {
  observationDigest,
  observationSigningBytes,
  signObservation,
  verifyObservation,
  type ObservationVerification,
} from '../contracts/collector/observation.js';
import { parsePublicKeyHex } from '../contracts/key-file.js';
import { MAX_ASSERTION_BYTES, taskResultAssertionDecoder, type TaskResultAssertion } from '../contracts/task/result.js';
import { readBoundedInput } from '../native/bounded-input.js';
import { loadSigningKey } from './key-store.js';

const ASSERTION_HINT = 'pass the path of a TaskResultAssertion JSON file, or - to read it from stdin';

/** Decode one assertion file strictly. */
export function readAssertionFile(file: string): TaskResultAssertion {
  return taskResultAssertionDecoder.decode(
    readBoundedInput(file, {
      limit: MAX_ASSERTION_BYTES,
      what: 'the assertion',
      stdin: true,
      missingHint: ASSERTION_HINT,
    }),
  );
}

export interface ObservationDigestResult {
  readonly digest: string;
  readonly length: number;
  /** The exact signing bytes (for --bytes); not part of the JSON answer. */
  readonly bytes: Uint8Array;
}

/** Signing bytes and observation digest of an assertion file. */
export function digestObservationFile(file: string): ObservationDigestResult {
  const assertion = readAssertionFile(file);
  const bytes = observationSigningBytes(assertion);
  return { digest: observationDigest(assertion), length: bytes.byteLength, bytes };
}

/** Sign an assertion file with a key file (checked owner-private); returns the signed assertion. */
export function signObservationFile(file: string, keyFile: string): TaskResultAssertion {
  const assertion = readAssertionFile(file);
  const key = loadSigningKey(keyFile);
  return signObservation(assertion, key.privateKey);
}

/** Verify an assertion file under a 64-hex public key; SIGNATURE_INVALID (exit 1) when it does not verify. */
export function verifyObservationFile(file: string, publicKeyHex: string): ObservationVerification {
  const publicKey = parsePublicKeyHex(publicKeyHex);
  const assertion = readAssertionFile(file);
  return verifyObservation(assertion, publicKey);
}
