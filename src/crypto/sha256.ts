/**
 * SHA-256. node:crypto (OpenSSL) is used rather than @noble/hashes for throughput: checkpoints
 * hash whole trees and the benchmark compares against git (docs/dependencies.md).
 */
import { createHash, hash, type Hash } from 'node:crypto';

// One-shot digests use crypto.hash, which skips building a Hash object (about twice as fast for
// the small documents every task transition hashes).
export function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(hash('sha256', bytes, 'buffer'));
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return hash('sha256', bytes, 'hex');
}

/** Incremental hasher for streamed content. */
export function createSha256(): Hash {
  return createHash('sha256');
}
