/**
 * The shared golden vector (test/vectors/observation-v1.json, copied from the project's vectors;
 * computed independently with Python's json module, hashlib and the cryptography package):
 * signing bytes, digest and Ed25519 signature reproduced byte for byte from the seed.
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
import { isJsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { taskResultAssertionDecoder } from '../../src/contracts/task/result.js';
import { publicKeyOf } from '../../src/crypto/ed25519.js';
import { REPO_ROOT } from '../helpers/cli.js';

const vector = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'observation-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(vector));
const field = (name: string): string => {
  const value = vector[name];
  assert.equal(typeof value, 'string', name);
  return value as string;
};
const signed = taskResultAssertionDecoder.validate(vector.assertion_signed ?? null);
const seed = Buffer.from(field('test_private_key_seed_hex'), 'hex');

test('the signing bytes of the vector are reproduced exactly (provenance nulled)', () => {
  const bytes = observationSigningBytes(signed);
  assert.equal(Buffer.from(bytes).toString('hex'), field('signing_bytes_hex'));
  assert.equal(bytes.byteLength, Number(vector.signing_bytes_length));
});

test('the observation digest of the vector is reproduced', () => {
  assert.equal(observationDigest(signed), field('digest'));
  assert.equal(signed.executor_provenance?.observation_digest, field('digest'));
});

test('signing the unsigned assertion with the seed reproduces the signature', () => {
  assert.equal(Buffer.from(publicKeyOf(seed)).toString('hex'), field('public_key_hex'));
  const unsigned = { ...signed, executor_provenance: null };
  const again = signObservation(unsigned, seed);
  assert.deepEqual(again.executor_provenance, { observation_digest: field('digest'), signature: field('signature') });
});

test('the vector verifies strictly under its public key', () => {
  const result = verifyObservation(signed, Buffer.from(field('public_key_hex'), 'hex'));
  assert.equal(result.observation_digest, field('digest'));
});

test('the fence above 2^53 survives decode and encode exactly', () => {
  assert.equal(signed.fence, 9223372036854775808n);
  assert.match(Buffer.from(observationSigningBytes(signed)).toString('utf8'), /"fence":9223372036854775808,/);
});
