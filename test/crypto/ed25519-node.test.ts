/**
 * Key derivation and signing run on node:crypto's Ed25519, verification on @noble/ed25519
 * (docs/dependencies.md). RFC 8032 signatures are deterministic, so both must produce byte-identical
 * public keys and signatures: on the RFC 8032 test 1 key, the seeds of the shared vectors and random
 * seeds and messages. A sabotaged pure-JS SHA-512 shows that deriving and signing no longer go
 * through the pure-JS implementation, while verification still does.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import * as ed from '@noble/ed25519';

import { generateKeyPair, publicKeyOf, signBytes, signDigest, verifyStrict } from '../../src/crypto/ed25519.js';

const hex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const vector = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../vectors/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

const collector = vector('collector-v1.json');
const observation = vector('observation-golden-v1.json');

const VECTORS: { name: string; seed: string; publicKey?: string; message: string; signature?: string }[] = [
  {
    name: 'RFC 8032 test 1',
    seed: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'collector-v1 transfer header',
    seed: String(collector.test_private_key_seed_hex),
    publicKey: String(collector.public_key_hex),
    message: String(collector.transfer_header_digest),
    signature: String(collector.transfer_signature_hex),
  },
  {
    name: 'observation-golden-v1',
    seed: String(observation.test_private_key_seed_hex),
    publicKey: String(observation.public_key_hex),
    message: String(observation.digest),
    signature: String(observation.signature),
  },
];

test('the vectors: node:crypto derives and signs exactly what the vectors and @noble/ed25519 give', () => {
  for (const v of VECTORS) {
    const seed = hex(v.seed);
    const message = hex(v.message);
    const publicKey = publicKeyOf(seed);
    const signature = signBytes(message, seed);
    assert.equal(toHex(publicKey), toHex(ed.getPublicKey(seed)), v.name);
    assert.equal(toHex(signature), toHex(ed.sign(message, seed)), v.name);
    if (v.publicKey !== undefined) assert.equal(toHex(publicKey), v.publicKey, v.name);
    if (v.signature !== undefined) assert.equal(toHex(signature), v.signature, v.name);
    assert.equal(verifyStrict(signature, message, publicKey), true, v.name);
  }
});

test('random seeds and messages: public keys and signatures are byte-identical to @noble/ed25519', () => {
  for (let i = 0; i < 64; i++) {
    const seed = new Uint8Array(randomBytes(32));
    const message = new Uint8Array(randomBytes([0, 1, 32, 64, 1000][i % 5] ?? 32));
    const publicKey = publicKeyOf(seed);
    assert.equal(toHex(publicKey), toHex(ed.getPublicKey(seed)), `seed ${toHex(seed)}`);
    const signature = signBytes(message, seed);
    assert.equal(toHex(signature), toHex(ed.sign(message, seed)), `seed ${toHex(seed)} message ${toHex(message)}`);
    assert.equal(verifyStrict(signature, message, publicKey), true);
  }
  const pair = generateKeyPair();
  assert.equal(toHex(pair.publicKey), toHex(ed.getPublicKey(pair.privateKey)));
});

test('a private key of another length than 32 bytes is refused before any key is built', () => {
  for (const length of [0, 31, 33, 64]) {
    assert.throws(() => publicKeyOf(new Uint8Array(length)), RangeError);
    assert.throws(() => signBytes(new Uint8Array(32), new Uint8Array(length)), RangeError);
  }
  assert.throws(() => signDigest(new Uint8Array(31), new Uint8Array(32)), RangeError);
});

test('deriving and signing do not use the pure-JS Ed25519; verifying does', () => {
  const seed = hex(VECTORS[0]?.seed ?? '');
  const message = new Uint8Array(32).fill(5);
  const signature = signBytes(message, seed);
  const publicKey = publicKeyOf(seed);
  const sha512 = ed.hashes.sha512;
  ed.hashes.sha512 = (): Uint8Array<ArrayBuffer> => {
    throw new Error('pure-JS Ed25519 used');
  };
  try {
    assert.equal(toHex(publicKeyOf(seed)), toHex(publicKey));
    assert.equal(toHex(signBytes(message, seed)), toHex(signature));
    assert.equal(toHex(generateKeyPair().publicKey).length, 64);
    assert.throws(() => ed.verify(signature, message, publicKey, { zip215: false }), /pure-JS Ed25519 used/);
  } finally {
    ed.hashes.sha512 = sha512;
  }
  assert.equal(verifyStrict(signature, message, publicKey), true);
});
