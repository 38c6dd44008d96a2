// Vector source: /work/shared/vectors/observation-v1.json (see README.md), computed
// independently with Python json (compact, ensure_ascii=False) + hashlib + cryptography.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { getPublicKeyAsync, verifyAsync } from '@noble/ed25519';

import { domainDigest, DOMAINS } from '../../src/contracts/digest.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';

const HERE = dirname(fileURLToPath(import.meta.url));

function objectOf(value: JsonValue | undefined): JsonObject {
  assert.ok(isJsonObject(value));
  return value;
}

function loadVector(): JsonObject {
  return objectOf(parseStrictJson(readFileSync(join(HERE, 'observation-v1.json')), { maxBytes: 64 * 1024 }));
}

/** The assertion as signed: executor_provenance replaced by null, field order as in the file. */
function signedAssertion(vector: JsonObject): JsonObject {
  const assertion = objectOf(vector.assertion_signed);
  return { ...assertion, executor_provenance: null };
}

test('the vector file keeps the fence exact (above 2^53) when read with the strict parser', () => {
  const fence = objectOf(loadVector().assertion_signed).fence;
  assert.equal(fence, 9223372036854775808n);
});

test('observation-v1: canonical bytes equal signing_bytes_hex and the domain digest equals digest', () => {
  const vector = loadVector();
  assert.equal(vector.domain, DOMAINS.observation);
  const bytes = encodeCanonical(signedAssertion(vector));
  assert.equal(Buffer.from(bytes).toString('hex'), vector.signing_bytes_hex);
  assert.equal(bytes.byteLength, vector.signing_bytes_length);
  assert.equal(domainDigest(DOMAINS.observation, bytes), vector.digest);
  // The retained provenance names the same digest the signature was made over.
  assert.equal(objectOf(objectOf(vector.assertion_signed).executor_provenance).observation_digest, vector.digest);
});

test('observation-v1 negative: one changed byte in the signing bytes changes the digest', () => {
  const vector = loadVector();
  const bytes = Buffer.from(encodeCanonical(signedAssertion(vector)));
  for (const at of [0, 100, bytes.length - 1]) {
    const changed = Buffer.from(bytes);
    changed[at] = (changed[at] ?? 0) ^ 0x01;
    assert.notEqual(domainDigest(DOMAINS.observation, changed), vector.digest, `byte ${at}`);
  }
});

test('observation-v1 negative: a changed u64 fence by one changes bytes and digest', () => {
  const vector = loadVector();
  const assertion = signedAssertion(vector);
  const bytes = encodeCanonical({ ...assertion, fence: 9223372036854775809n });
  assert.notEqual(Buffer.from(bytes).toString('hex'), vector.signing_bytes_hex);
  assert.notEqual(domainDigest(DOMAINS.observation, bytes), vector.digest);
  // A float round trip would have collapsed both values; the exact path keeps them apart.
  assert.equal(Number(9223372036854775809n), Number(9223372036854775808n));
});

test('observation-v1 negative: reordered fields give different bytes and digest', () => {
  const vector = loadVector();
  const assertion = signedAssertion(vector);
  const { task_id, version, ...rest } = assertion;
  const reordered: JsonObject = { task_id: task_id ?? null, version: version ?? null, ...rest };
  const bytes = encodeCanonical(reordered);
  assert.notEqual(Buffer.from(bytes).toString('hex'), vector.signing_bytes_hex);
  assert.equal(bytes.byteLength, vector.signing_bytes_length);
  assert.notEqual(domainDigest(DOMAINS.observation, bytes), vector.digest);
});

test('observation-v1 negative: omitting the null provenance or keeping it both differ from the vector', () => {
  const vector = loadVector();
  const { executor_provenance: _dropped, ...withoutProvenance } = signedAssertion(vector);
  assert.notEqual(domainDigest(DOMAINS.observation, encodeCanonical(withoutProvenance)), vector.digest);
  assert.notEqual(domainDigest(DOMAINS.observation, encodeCanonical(objectOf(vector.assertion_signed))), vector.digest);
});

test('observation-v1 negative: the same bytes under another domain give another digest', () => {
  const vector = loadVector();
  const bytes = encodeCanonical(signedAssertion(vector));
  assert.notEqual(domainDigest(DOMAINS.task, bytes), vector.digest);
  assert.notEqual(
    domainDigest('agentscm.agent-workflow-observation.v1' as const, bytes.subarray(0, bytes.length - 1)),
    vector.digest,
  );
});

test('observation-v1: the vector signature verifies over the 32 raw digest bytes under strict RFC 8032', async () => {
  const vector = loadVector();
  const hex = (value: JsonValue | undefined): Uint8Array => {
    assert.equal(typeof value, 'string');
    return Buffer.from(value as string, 'hex');
  };
  const digest = hex(vector.digest);
  assert.equal(digest.byteLength, 32);
  assert.equal(
    Buffer.from(await getPublicKeyAsync(hex(vector.test_private_key_seed_hex))).toString('hex'),
    vector.public_key_hex,
  );
  assert.ok(await verifyAsync(hex(vector.signature), digest, hex(vector.public_key_hex), { zip215: false }));
  const other = Buffer.from(digest);
  other[0] = (other[0] ?? 0) ^ 0x01;
  assert.equal(await verifyAsync(hex(vector.signature), other, hex(vector.public_key_hex), { zip215: false }), false);
});
