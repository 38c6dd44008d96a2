/**
 * Our own golden vector (test/vectors/observation-golden-v1.json, computed independently by
 * test/vectors/observation-golden-v1.py with Python's json module, hashlib and cryptography):
 * control characters, DEL, U+2028/2029, emoji, non-ASCII, an empty finding, empty arrays and the
 * largest u64 — bytes, digest and signature must match exactly. Then the negative cases.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  observationDigest,
  observationSigningBytes,
  signObservation,
  verifyObservation,
} from '../../src/contracts/collector/observation.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { isJsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import {
  resultRequestDigest,
  taskResultAssertionDecoder,
  type TaskResultAssertion,
} from '../../src/contracts/task/result.js';
import { generateKeyPair, verificationKeyId } from '../../src/crypto/ed25519.js';
import { REPO_ROOT } from '../helpers/cli.js';

const vector = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'observation-golden-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(vector));
const str = (name: string): string => {
  const value = vector[name];
  assert.equal(typeof value, 'string', name);
  return value as string;
};
const unsigned = taskResultAssertionDecoder.validate(vector.assertion_unsigned ?? null);
const seed = Buffer.from(str('test_private_key_seed_hex'), 'hex');
const publicKey = Buffer.from(str('public_key_hex'), 'hex');

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentscmError) {
      const reason = error.details?.reason;
      return typeof reason === 'string' ? `${error.code}:${reason}` : error.code;
    }
    throw error;
  }
  return 'no error';
}

test('golden: signing bytes equal the independently computed bytes', () => {
  const bytes = Buffer.from(observationSigningBytes(unsigned));
  assert.equal(bytes.toString('hex'), str('signing_bytes_hex'));
  assert.equal(bytes.byteLength, Number(vector.signing_bytes_length));
  const text = bytes.toString('utf8');
  for (const piece of [
    '\\u0001',
    '\\u001f',
    '\\u001b',
    '\\b\\t\\n\\f\\r',
    '\\"',
    '\\\\',
    'slash:/',
    '\u007f',
    '\u2028',
    '\u2029',
    '\u{1F600}',
    '"fence":18446744073709551615',
    '"executor_provenance":null',
  ]) {
    assert.ok(text.includes(piece), `signing text contains ${JSON.stringify(piece)}`);
  }
});

test('golden: digest and signature equal the independently computed ones', () => {
  assert.equal(observationDigest(unsigned), str('digest'));
  const signed = signObservation(unsigned, seed);
  assert.deepEqual(signed.executor_provenance, { observation_digest: str('digest'), signature: str('signature') });
  assert.equal(verifyObservation(signed, publicKey).observation_digest, str('digest'));
});

test('provenance does not change the signing bytes, but does change the result request digest', () => {
  const signed = signObservation(unsigned, seed);
  assert.deepEqual(observationSigningBytes(signed), observationSigningBytes(unsigned));
  assert.notEqual(resultRequestDigest(signed), resultRequestDigest(unsigned));
});

const signed: TaskResultAssertion = signObservation(unsigned, seed);

test('a tampered field of the signed assertion fails verification as digest_mismatch', () => {
  const tampered: TaskResultAssertion = { ...signed, outcome: 'passed' };
  assert.equal(
    codeOf(() => verifyObservation(tampered, publicKey)),
    'SIGNATURE_INVALID:digest_mismatch',
  );
  const reordered: TaskResultAssertion = { ...signed, criteria: [...signed.criteria].reverse() };
  assert.equal(
    codeOf(() => verifyObservation(reordered, publicKey)),
    'SIGNATURE_INVALID:digest_mismatch',
  );
  const finding: TaskResultAssertion = {
    ...signed,
    criteria: signed.criteria.map((row, i) =>
      i === 0 ? { ...row, findings: [...row.findings.slice(0, -1), ' '] } : row,
    ),
  };
  assert.equal(
    codeOf(() => verifyObservation(finding, publicKey)),
    'SIGNATURE_INVALID:digest_mismatch',
  );
});

test('a tampered signature byte, a digest claimed for other bytes and an unsigned observation fail', () => {
  const provenance = signed.executor_provenance;
  assert.ok(provenance !== null);
  const flipped = `${provenance.signature.slice(0, 10)}${provenance.signature[10] === '0' ? '1' : '0'}${provenance.signature.slice(11)}`;
  assert.equal(
    codeOf(() =>
      verifyObservation({ ...signed, executor_provenance: { ...provenance, signature: flipped } }, publicKey),
    ),
    'SIGNATURE_INVALID:signature',
  );
  assert.equal(
    codeOf(() =>
      verifyObservation(
        { ...signed, executor_provenance: { ...provenance, observation_digest: '0'.repeat(64) } },
        publicKey,
      ),
    ),
    'SIGNATURE_INVALID:digest_mismatch',
  );
  assert.equal(
    codeOf(() => verifyObservation(unsigned, publicKey)),
    'SIGNATURE_INVALID:unsigned',
  );
});

test('a wrong key is refused: as key mismatch, and as a bad signature when the binding names it', () => {
  const other = generateKeyPair();
  assert.equal(
    codeOf(() => verifyObservation(signed, other.publicKey)),
    'SIGNATURE_INVALID:key_mismatch',
  );
  const executor = signed.executor;
  assert.ok(executor !== null);
  const rebound: TaskResultAssertion = {
    ...signed,
    executor: { ...executor, verification_key_id: verificationKeyId(other.publicKey) },
  };
  // The digest covers the binding, so re-pointing it at another key breaks the digest first.
  assert.equal(
    codeOf(() => verifyObservation(rebound, other.publicKey)),
    'SIGNATURE_INVALID:digest_mismatch',
  );
});

test('a small-order public key is refused before any signature check', () => {
  const identity = Buffer.from(`01${'00'.repeat(31)}`, 'hex');
  assert.equal(
    codeOf(() => verifyObservation(signed, identity)),
    'PUBLIC_KEY_INVALID',
  );
});

test('a signature with S + L (non-canonical) is refused', () => {
  const provenance = signed.executor_provenance;
  assert.ok(provenance !== null);
  const sig = Buffer.from(provenance.signature, 'hex');
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i] ?? 0);
  s += 2n ** 252n + 27742317777372353535851937790883648493n;
  for (let i = 32; i < 64; i++) {
    sig[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  assert.equal(
    codeOf(() =>
      verifyObservation(
        { ...signed, executor_provenance: { ...provenance, signature: sig.toString('hex') } },
        publicKey,
      ),
    ),
    'SIGNATURE_INVALID:signature',
  );
});

test('signing refuses a key other than the bound one and non-observation trust classes', () => {
  assert.equal(
    codeOf(() => signObservation(unsigned, generateKeyPair().privateKey)),
    'SIGNING_KEY_MISMATCH',
  );
  const agentAssertion: TaskResultAssertion = { ...unsigned, trust_class: 'agent_assertion', executor: null };
  assert.equal(
    codeOf(() => signObservation(agentAssertion, seed)),
    'TRUST_CLASS_INVALID',
  );
});
