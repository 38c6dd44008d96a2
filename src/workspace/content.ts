/**
 * Reading workspace file contents: never through a symlink (O_NOFOLLOW; a symlink's content
 * is its target bytes), one chunk at a time for large files, into caller-provided memory for
 * small ones, and with the file's identity checked after the read against the scan's stat
 * snapshot: a file written after it was scanned has a different mtime/ctime/size, so it is
 * WORKSPACE_CHANGED rather than a silently mixed blob.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats } from 'node:fs';

import { AgentscmError } from '../contracts/errors.js';
import { createSha256 } from '../crypto/sha256.js';
import { BLOB_CHUNK_BYTES } from '../native/blobs.js';
import type { ScannedFile } from './scan.js';
import type { StatSnapshot } from './stat-cache.js';

export interface FileContent {
  readonly digest: string;
  readonly size: bigint;
  /** The whole content (in the caller's memory) when it fits in one blob chunk; null for a large file. */
  readonly bytes: Buffer | null;
}

/** Gives the memory a small file (at most BLOB_CHUNK_BYTES) is read into. */
export type ReadTarget = (size: number) => Buffer;

function changed(path: string): AgentscmError {
  return new AgentscmError('WORKSPACE_CHANGED', `${path} changed while it was being read`, {
    hint: 'wait until the files stop changing and run the command again',
  });
}

function sameFile(a: StatSnapshot, b: Stats): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}

function openFile(file: ScannedFile): number {
  try {
    return openSync(file.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'EISDIR') throw changed(file.path);
    throw new AgentscmError('IO_ERROR', `cannot read ${file.path}: ${code ?? (error as Error).message}`, {
      cause: error,
    });
  }
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
const probe = Buffer.allocUnsafe(1);

/** A read target that reuses one chunk-sized buffer (for hashing without keeping contents). */
export const scratchTarget: ReadTarget = (size) => chunkBuffer().subarray(0, size);

/** Hash a file or symlink; a small content is left in the memory `target` gave. */
export function readFileContent(file: ScannedFile, target: ReadTarget): FileContent {
  if (file.mode === 'symlink') {
    let link: Buffer;
    let after: Stats;
    try {
      link = readlinkSync(file.abs, { encoding: 'buffer' });
      after = lstatSync(file.abs);
    } catch {
      throw changed(file.path);
    }
    if (!after.isSymbolicLink() || !sameFile(file.stat, after)) throw changed(file.path);
    return { digest: createSha256().update(link).digest('hex'), size: BigInt(link.byteLength), bytes: link };
  }
  const fd = openFile(file);
  try {
    const size = file.stat.size;
    const hash = createSha256();
    let bytes: Buffer | null = null;
    if (size <= BLOB_CHUNK_BYTES) {
      bytes = target(size);
      if (readFully(fd, bytes, size) !== size) throw changed(file.path);
      hash.update(bytes);
    } else {
      const buffer = chunkBuffer();
      let total = 0;
      for (;;) {
        const n = readFully(fd, buffer, buffer.length);
        if (n === 0) break;
        hash.update(buffer.subarray(0, n));
        total += n;
        if (total > size) throw changed(file.path);
      }
      if (total !== size) throw changed(file.path);
    }
    // One more byte would mean the file grew after the stat.
    if (readSync(fd, probe, 0, 1, null) !== 0) throw changed(file.path);
    if (!sameFile(file.stat, fstatSync(fd))) throw changed(file.path);
    return { digest: hash.digest('hex'), size: BigInt(size), bytes };
  } finally {
    closeSync(fd);
  }
}

/**
 * The chunks of a large file, read again for storing. The store hashes them on the way in and
 * refuses a mismatch with the digest computed before, so a change in between is caught.
 */
export function* streamFileChunks(file: ScannedFile): Generator<Buffer, void, undefined> {
  const fd = openFile(file);
  try {
    const buffer = chunkBuffer();
    for (;;) {
      const n = readFully(fd, buffer, buffer.length);
      if (n === 0) break;
      yield buffer.subarray(0, n);
    }
    if (!sameFile(file.stat, fstatSync(fd))) throw changed(file.path);
  } finally {
    closeSync(fd);
  }
}
