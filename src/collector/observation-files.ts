/**
 * Observation debugging for operators and agents (`agentscm agent-task observation-digest |
 * sign-observation | verify-observation`): read one assertion file (or stdin for `-`), bounded
 * at 256 KiB before it is parsed, and run the pure signing functions of
 * src/contracts/observation.ts over it.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { AgentscmError } from '../contracts/errors.js';
import type { ObservationVerification } from '../contracts/observation.js';
import { parsePublicKeyHex } from '../contracts/key-file.js';
import { observationDigest, observationSigningBytes, signObservation, verifyObservation } from '../contracts/observation.js';
import type { TaskResultAssertion } from '../contracts/task-result.js';
import { MAX_ASSERTION_BYTES, taskResultAssertionDecoder } from '../contracts/task-result.js';
import { loadSigningKey } from './key-store.js';

/** Read at most `limit` bytes from a file or stdin (`-`); one byte more is INPUT_TOO_LARGE. */
export function readBoundedInput(file: string, limit: number): Buffer {
  let fd: number;
  const stdin = file === '-';
  try {
    fd = stdin ? 0 : openSync(file, 'r');
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot open ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    if (!stdin) {
      const stats = fstatSync(fd);
      if (!stats.isFile()) throw new AgentscmError('IO_ERROR', `${file} is not a regular file`);
      if (stats.size > limit) {
        throw new AgentscmError('INPUT_TOO_LARGE', `${file} is ${stats.size} bytes, more than the limit of ${limit}; it was not read`, { details: { size: stats.size, limit } });
      }
    }
    const buffer = Buffer.alloc(limit + 1);
    let read = 0;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buffer, read, buffer.length - read, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') continue;
        if ((error as NodeJS.ErrnoException).code === 'EOF') break;
        throw new AgentscmError('IO_ERROR', `cannot read ${stdin ? 'stdin' : file}: ${(error as Error).message}`, { cause: error });
      }
      if (n === 0) break;
      read += n;
      if (read > limit) {
        throw new AgentscmError('INPUT_TOO_LARGE', `${stdin ? 'stdin' : file} holds more than ${limit} bytes; it was not parsed`, { details: { limit } });
      }
    }
    return buffer.subarray(0, read);
  } finally {
    if (!stdin) closeSync(fd);
  }
}

/** Decode one assertion file strictly. */
export function readAssertionFile(file: string): TaskResultAssertion {
  return taskResultAssertionDecoder.decode(readBoundedInput(file, MAX_ASSERTION_BYTES));
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
