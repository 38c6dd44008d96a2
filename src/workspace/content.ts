/**
 * Reading workspace file contents: never through a symlink (O_NOFOLLOW; a symlink's content
 * is its target bytes), one chunk at a time for large files, and with the file's identity
 * checked before and after the read against the scan's stat snapshot, so a file that changes
 * while it is read is WORKSPACE_CHANGED rather than a silently mixed blob.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import { AgentscmError } from '../contracts/errors.js';
import { createSha256 } from '../crypto/sha256.js';
import { BLOB_CHUNK_BYTES } from '../native/blobs.js';
import type { ScannedFile } from './scan.js';
import type { StatSnapshot } from './state.js';

export interface FileContent {
  readonly digest: string;
  readonly size: bigint;
  /** The whole content when it fits in one blob chunk; null for a large file (stream it again to store it). */
  readonly bytes: Buffer | null;
}

function changed(path: string): AgentscmError {
  return new AgentscmError('WORKSPACE_CHANGED', `${path} changed while it was being read`, {
    hint: 'wait until the files stop changing and run the command again',
  });
}

function sameFile(a: StatSnapshot, b: BigIntStats): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;
}

function openChecked(file: ScannedFile): number {
  let fd: number;
  try {
    fd = openSync(file.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') throw changed(file.path);
    throw new AgentscmError('IO_ERROR', `cannot read ${file.path}: ${code ?? (error as Error).message}`, { cause: error });
  }
  if (!sameFile(file.stat, fstatSync(fd, { bigint: true }))) {
    closeSync(fd);
    throw changed(file.path);
  }
  return fd;
}

function readFully(fd: number, buffer: Buffer, length: number): number {
  let filled = 0;
  while (filled < length) {
    const n = readSync(fd, buffer, filled, length - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return filled;
}

let sharedChunk: Buffer | null = null;
function chunkBuffer(): Buffer {
  sharedChunk ??= Buffer.allocUnsafe(BLOB_CHUNK_BYTES);
  return sharedChunk;
}

/** Hash a file or symlink; small contents are returned for storing without a second read. */
export function readFileContent(file: ScannedFile): FileContent {
  if (file.mode === 'symlink') {
    let target: Buffer;
    try {
      target = readlinkSync(file.abs, { encoding: 'buffer' });
    } catch {
      throw changed(file.path);
    }
    let after: BigIntStats;
    try {
      after = lstatSync(file.abs, { bigint: true });
    } catch {
      throw changed(file.path);
    }
    if (!after.isSymbolicLink() || !sameFile(file.stat, after)) throw changed(file.path);
    return { digest: createSha256().update(target).digest('hex'), size: BigInt(target.byteLength), bytes: target };
  }
  const fd = openChecked(file);
  try {
    const size = file.stat.size;
    const hash = createSha256();
    let bytes: Buffer | null = null;
    if (size <= BigInt(BLOB_CHUNK_BYTES)) {
      const length = Number(size);
      bytes = Buffer.allocUnsafe(length);
      if (readFully(fd, bytes, length) !== length) throw changed(file.path);
      hash.update(bytes);
    } else {
      const buffer = chunkBuffer();
      let total = 0n;
      for (;;) {
        const n = readFully(fd, buffer, buffer.length);
        if (n === 0) break;
        hash.update(buffer.subarray(0, n));
        total += BigInt(n);
        if (total > size) throw changed(file.path);
      }
      if (total !== size) throw changed(file.path);
    }
    // One more byte would mean the file grew after the stat.
    if (readSync(fd, Buffer.allocUnsafe(1), 0, 1, null) !== 0) throw changed(file.path);
    if (!sameFile(file.stat, fstatSync(fd, { bigint: true }))) throw changed(file.path);
    return { digest: hash.digest('hex'), size, bytes };
  } finally {
    closeSync(fd);
  }
}

/**
 * The chunks of a large file, read again for storing. The store hashes them on the way in and
 * refuses a mismatch with the digest computed before, so a change in between is caught.
 */
export function* streamFileChunks(file: ScannedFile): Generator<Buffer, void, undefined> {
  const fd = openChecked(file);
  try {
    const buffer = chunkBuffer();
    for (;;) {
      const n = readFully(fd, buffer, buffer.length);
      if (n === 0) break;
      yield buffer.subarray(0, n);
    }
    if (!sameFile(file.stat, fstatSync(fd, { bigint: true }))) throw changed(file.path);
  } finally {
    closeSync(fd);
  }
}
