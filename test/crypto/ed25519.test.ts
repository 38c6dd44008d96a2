/**
 * Strict Ed25519 (docs/wire.md "Keys"). RFC 8032 section 7.1 test 1
 * (https://www.rfc-editor.org/rfc/rfc8032#section-7.1) for interoperability, then the cases where
 * the permissive ZIP-215 default of @noble/ed25519 would accept and strict verification must not.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import * as ed from '@noble/ed25519';

import {
  generateKeyPair,
  publicKeyOf,
  publicKeyProblem,
  signBytes,
  verificationKeyId,
  verifyStrict,
} from '../../src/crypto/ed25519.js';
import { sha256Hex } from '../../src/crypto/sha256.js';

const hex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

const RFC_SECRET = hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
const RFC_PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const RFC_SIGNATURE =
  'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

function withS(signature: Uint8Array, s: bigint): Uint8Array {
  const out = new Uint8Array(signature);
  let v = s;
  for (let i = 32; i < 64; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function sOf(signature: Uint8Array): bigint {
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i] ?? 0);
  return s;
}

test('RFC 8032 test 1: public key, signature and verification reproduce', () => {
  assert.equal(Buffer.from(publicKeyOf(RFC_SECRET)).toString('hex'), RFC_PUBLIC);
  const signature = signBytes(new Uint8Array(0), RFC_SECRET);
  assert.equal(Buffer.from(signature).toString('hex'), RFC_SIGNATURE);
  assert.equal(verifyStrict(signature, new Uint8Array(0), hex(RFC_PUBLIC)), true);
});

test('verification_key_id is the SHA-256 of the 32 raw public key bytes', () => {
  assert.equal(verificationKeyId(hex(RFC_PUBLIC)), sha256Hex(hex(RFC_PUBLIC)));
});

test('a tampered message, a tampered signature and a wrong key are refused', () => {
  const { privateKey, publicKey } = generateKeyPair();
  const message = hex('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff');
  const signature = signBytes(message, privateKey);
  assert.equal(verifyStrict(signature, message, publicKey), true);
  const tamperedMessage = new Uint8Array(message);
  tamperedMessage[0] = (tamperedMessage[0] ?? 0) ^ 1;
  assert.equal(verifyStrict(signature, tamperedMessage, publicKey), false);
  const tamperedSignature = new Uint8Array(signature);
  tamperedSignature[5] = (tamperedSignature[5] ?? 0) ^ 0x10;
  assert.equal(verifyStrict(tamperedSignature, message, publicKey), false);
  assert.equal(verifyStrict(signature, message, generateKeyPair().publicKey), false);
  assert.equal(verifyStrict(signature.subarray(0, 63), message, publicKey), false);
});

test('a non-canonical S (S + L) is refused although it satisfies the group equation', () => {
  const message = hex('abcd');
  const signature = signBytes(message, RFC_SECRET);
  const malleable = withS(signature, sOf(signature) + L);
  assert.ok(sOf(malleable) >= L);
  assert.equal(verifyStrict(malleable, message, hex(RFC_PUBLIC)), false);
});

test('small-order public keys are refused, where the permissive default accepts a forgery', () => {
  // The identity point (y = 1) has order 1: with R = identity and S = 0 the cofactored equation
  // holds for every message, so ZIP-215 verification accepts this "signature".
  const identity = hex('0100000000000000000000000000000000000000000000000000000000000000');
  const forged = new Uint8Array(64);
  forged.set(identity, 0);
  const message = hex('deadbeef');
  assert.equal(
    ed.verify(forged, message, identity),
    true,
    'the permissive default accepts it (this is why strict mode is used)',
  );
  assert.equal(verifyStrict(forged, message, identity), false);
  assert.match(publicKeyProblem(identity) ?? '', /small order/);
  // y = 0 encodes a point of order 4 (x = sqrt(-1)).
  const order4 = hex('0000000000000000000000000000000000000000000000000000000000000000');
  assert.match(publicKeyProblem(order4) ?? '', /small order/);
});

test('wrong-length and non-canonical public keys are described, valid ones are not', () => {
  assert.match(publicKeyProblem(new Uint8Array(31)) ?? '', /31 bytes/);
  // y = 2^255 - 1 is not below p: not a canonical encoding.
  const nonCanonical = new Uint8Array(32).fill(0xff);
  nonCanonical[31] = 0x7f;
  assert.match(publicKeyProblem(nonCanonical) ?? '', /canonical|curve/);
  assert.equal(publicKeyProblem(hex(RFC_PUBLIC)), undefined);
  assert.equal(verifyStrict(signBytes(hex('01'), RFC_SECRET), hex('01'), nonCanonical), false);
});

test('generated keys are fresh 32-byte pairs', () => {
  const a = generateKeyPair();
  const b = generateKeyPair();
  assert.equal(a.privateKey.byteLength, 32);
  assert.equal(a.publicKey.byteLength, 32);
  assert.notDeepEqual(a.privateKey, b.privateKey);
  assert.deepEqual(publicKeyOf(a.privateKey), a.publicKey);
});
