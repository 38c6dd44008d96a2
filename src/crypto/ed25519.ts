/**
 * Ed25519 (docs/wire.md "Keys"). Key derivation and signing go through the runtime's own Ed25519
 * (node:crypto, OpenSSL): RFC 8032 signing is deterministic, so it yields the same public keys and
 * signatures as @noble/ed25519 (test/crypto/ed25519-node.test.ts), without building the pure-JS
 * precomputed tables in a process that only signs. Verification stays on @noble/ed25519 v3, with
 * SHA-512 from node:crypto, and is strict RFC 8032: `{ zip215: false }` (canonical point
 * encodings), S < L, and small-order public keys refused. Pure: no I/O; randomness only in
 * generateKeyPair.
 */
import { createPrivateKey, createPublicKey, hash, randomBytes, sign, type KeyObject } from 'node:crypto';
import * as ed from '@noble/ed25519';

import { sha256Hex } from './sha256.js';

// OpenSSL's SHA-512, like sha256.ts: the same digest as the pure-JS one, without its cold start
// (a short command that verifies 32 signatures spent about a tenth of that work warming it up).
ed.hashes.sha512 = (message: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(hash('sha512', message, 'buffer'));

export const PUBLIC_KEY_BYTES = 32;
export const PRIVATE_KEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;

/** Group order L of the Ed25519 base point (RFC 8032 section 5.1). */
const GROUP_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

export interface Ed25519KeyPair {
  /** The 32-byte RFC 8032 secret seed. */
  readonly privateKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

/** DER of a PKCS#8 Ed25519 private key (RFC 8410 section 7) up to its 32-byte seed. */
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** DER of an SPKI Ed25519 public key (RFC 8410 section 4) up to its 32 raw bytes. */
const SPKI_KEY_PREFIX_BYTES = 12;

/** node:crypto's key object for a 32-byte seed (checked length). */
function privateKeyObject(privateKey: Uint8Array): KeyObject {
  if (privateKey.byteLength !== PRIVATE_KEY_BYTES)
    throw new RangeError(`an Ed25519 private key is ${PRIVATE_KEY_BYTES} bytes`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, privateKey]), format: 'der', type: 'pkcs8' });
}

/** A fresh key pair from the platform CSPRNG. */
export function generateKeyPair(): Ed25519KeyPair {
  const privateKey = new Uint8Array(randomBytes(PRIVATE_KEY_BYTES));
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/** The public key of a 32-byte secret seed. */
export function publicKeyOf(privateKey: Uint8Array): Uint8Array {
  const spki = createPublicKey(privateKeyObject(privateKey)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(SPKI_KEY_PREFIX_BYTES));
}

/** verification_key_id: lowercase hex SHA-256 of the 32 raw public key bytes (docs/wire.md "Identifiers"). */
export function verificationKeyId(publicKey: Uint8Array): string {
  return sha256Hex(publicKey);
}

/** Why a public key is unusable, or undefined: wrong length, non-canonical or invalid point, small order. */
export function publicKeyProblem(publicKey: Uint8Array): string | undefined {
  if (publicKey.byteLength !== PUBLIC_KEY_BYTES) return `it is ${publicKey.byteLength} bytes, not ${PUBLIC_KEY_BYTES}`;
  let point: ed.Point;
  try {
    point = ed.Point.fromBytes(publicKey, false);
  } catch {
    return 'it is not the canonical encoding of a point on the curve';
  }
  if (point.isSmallOrder()) return 'it is a point of small order';
  return undefined;
}

/** Sign `message` (here always the 32 raw digest bytes) with a 32-byte seed. */
export function signBytes(message: Uint8Array, privateKey: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyObject(privateKey)));
}

/** Length of the digests that are signed (SHA-256). */
export const DIGEST_BYTES = 32;

/**
 * Sign the 32 raw bytes of a digest (docs/wire.md "Keys": Ed25519 signs the raw digest bytes, never
 * its hex text); a message of another length is refused, so a caller cannot sign hex by mistake.
 */
export function signDigest(digest: Uint8Array, privateKey: Uint8Array): Uint8Array {
  if (digest.byteLength !== DIGEST_BYTES)
    throw new RangeError(`a signed digest is ${DIGEST_BYTES} bytes, not ${digest.byteLength}`);
  return signBytes(digest, privateKey);
}

/** S (the second half of a signature, little-endian) is canonical only below L. */
function hasCanonicalS(signature: Uint8Array): boolean {
  let s = 0n;
  for (let i = SIGNATURE_BYTES - 1; i >= PUBLIC_KEY_BYTES; i--) s = (s << 8n) | BigInt(signature[i] ?? 0);
  return s < GROUP_ORDER;
}

/**
 * Strict verification: false for a wrong-length signature or key, a small-order or
 * non-canonical public key, a non-canonical R or S ≥ L, or a signature that does not verify.
 */
export function verifyStrict(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.byteLength !== SIGNATURE_BYTES) return false;
  if (publicKeyProblem(publicKey) !== undefined) return false;
  if (!hasCanonicalS(signature)) return false;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** verifyStrict over the 32 raw bytes of a digest; false for a message of another length. */
export function verifyDigestStrict(signature: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): boolean {
  return digest.byteLength === DIGEST_BYTES && verifyStrict(signature, digest, publicKey);
}
