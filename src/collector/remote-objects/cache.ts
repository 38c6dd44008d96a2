/**
 * The collector's content-addressed object cache (docs/collect.md "Collecting on another host"):
 * STATE_DIR/objects/{trees,blobs}/<2 hex>/<64 hex>, owner-private (0700 directories, 0600 files).
 * Only objects already checked against their digest are written, each atomically (a temporary
 * file in the same directory, then a rename; not fsynced: an entry torn by a crash fails its check);
 * every read checks the bytes again, and an entry
 * that no longer matches its name is removed and reported missing, so it is fetched again.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { domainDigest, DOMAINS } from '../../contracts/digest.js';
import { AgentscmError } from '../../contracts/errors.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { ensurePrivateDir } from '../snapshot.js';

export type ObjectKind = 'trees' | 'blobs';

const HEX64 = /^[0-9a-f]{64}$/;

/** The digest of `bytes` as an object of `kind` names it. */
export function objectDigest(kind: ObjectKind, bytes: Uint8Array): string {
  return kind === 'trees' ? domainDigest(DOMAINS.tree, bytes) : sha256Hex(bytes);
}

let temporaries = 0;

/**
 * The most bytes of objects checked by this process kept in memory until their first read: the
 * snapshot of a first fetch is written from them without reading and hashing the cache again.
 */
export const VERIFIED_MEMORY_BYTES = 256 * 1024 * 1024;

export class ObjectCache {
  readonly dir: string;
  /** Objects this process wrote (checked) and nobody read yet, by kind and digest; at most VERIFIED_MEMORY_BYTES. */
  private readonly fresh = new Map<string, Uint8Array>();
  private freshBytes = 0;

  constructor(stateDir: string) {
    this.dir = ensurePrivateDir(join(ensurePrivateDir(stateDir), 'objects'));
  }

  private pathOf(kind: ObjectKind, digest: string): string {
    if (!HEX64.test(digest)) throw new AgentscmError('INTERNAL', 'object names are 64 lowercase hex');
    return join(this.dir, kind, digest.slice(0, 2), digest);
  }

  /** The verified bytes of an object, or null when it is not cached (a damaged entry is removed). */
  read(kind: ObjectKind, digest: string): Buffer | null {
    const path = this.pathOf(kind, digest);
    const key = `${kind}/${digest}`;
    const fresh = this.fresh.get(key);
    if (fresh !== undefined) {
      // Checked when written by this process, and never handed out before: its bytes are the object's.
      this.fresh.delete(key);
      this.freshBytes -= fresh.byteLength;
      return Buffer.from(fresh.buffer, fresh.byteOffset, fresh.byteLength);
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new AgentscmError('IO_ERROR', `cannot read cached object ${digest}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (objectDigest(kind, bytes) === digest) return bytes;
    rmSync(path, { force: true });
    return null;
  }

  has(kind: ObjectKind, digest: string): boolean {
    if (this.fresh.has(`${kind}/${digest}`)) return true;
    return this.read(kind, digest) !== null;
  }

  /** Keep an object whose bytes the caller checked against `digest` (checked again here: never a wrong entry). */
  write(kind: ObjectKind, digest: string, bytes: Uint8Array): void {
    if (objectDigest(kind, bytes) !== digest)
      throw new AgentscmError('INTERNAL', `refusing to cache bytes that are not object ${digest}`);
    const path = this.pathOf(kind, digest);
    const dir = join(this.dir, kind, digest.slice(0, 2));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    temporaries += 1;
    const temporary = join(dir, `.${digest}.${process.pid}.${temporaries}.tmp`);
    try {
      const fd = openSync(temporary, 'wx', 0o600);
      try {
        // No fsync: an entry torn by a crash no longer matches its name and is fetched again on read.
        writeSync(fd, bytes);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, path);
      const key = `${kind}/${digest}`;
      if (!this.fresh.has(key) && this.freshBytes + bytes.byteLength <= VERIFIED_MEMORY_BYTES) {
        this.fresh.set(key, bytes);
        this.freshBytes += bytes.byteLength;
      }
    } catch (error) {
      rmSync(temporary, { force: true });
      throw new AgentscmError('IO_ERROR', `cannot cache object ${digest}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
