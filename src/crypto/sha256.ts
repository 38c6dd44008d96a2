/**
 * SHA-256. node:crypto (OpenSSL) is used rather than @noble/hashes for throughput: checkpoints
 * hash whole trees and the benchmark compares against git (docs/dependencies.md).
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';

export function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest());
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Incremental hasher for streamed content. */
export function createSha256(): Hash {
  return createHash('sha256');
}
