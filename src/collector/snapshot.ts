/**
 * Materialize one immutable native revision as a directory the container mounts read-only
 * (docs/command-collector.md "Snapshots": collector state and snapshot parents are owner-private
 * and non-symlink, and attempt-derived snapshot paths use a single digest component).
 *
 * The parent is 0700, owned by this user, not a symlink and reached through no symlink; the
 * snapshot itself is parent/<64 hex>. Inside it, directories are 0755 and files 0644/0755 so
 * that the container's non-root user can read them; the 0700 parent keeps other host users out.
 */
import {
  chmodSync,
  closeSync,
  existsSync,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { streamBlob } from '../native/blobs.js';
import { getRevision, iterateRevisionEntries } from '../native/revisions.js';
import type { Authority } from '../native/store.js';

/** Bounds checked against the revision row before anything is written. */
export const SNAPSHOT_LIMITS = {
  maxEntries: 200_000,
  maxTotalBytes: 4 * 1024 * 1024 * 1024,
} as const;

const DIGEST = /^[0-9a-f]{64}$/;

function unsafe(path: string, why: string): AgentscmError {
  return new AgentscmError('SNAPSHOT_UNSAFE', `snapshot parent ${path} ${why}`, {
    hint: 'use a directory that only this user can enter (mode 0700, no symlink anywhere on its path)',
  });
}

/**
 * Create (if missing) and check an owner-private directory: mode 0700, owned by the current
 * user, not a symlink, and its real path equal to its absolute path (no symlinked ancestor).
 */
export function ensurePrivateDir(path: string): string {
  const absolute = resolve(path);
  try {
    mkdirSync(absolute, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new AgentscmError('IO_ERROR', `cannot create ${absolute}: ${(error as Error).message}`, { cause: error });
  }
  const stat = lstatSync(absolute);
  if (stat.isSymbolicLink()) throw unsafe(absolute, 'is a symlink');
  if (!stat.isDirectory()) throw unsafe(absolute, 'is not a directory');
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid())
    throw unsafe(absolute, `is owned by uid ${stat.uid}, not by this user`);
  if ((stat.mode & 0o077) !== 0) throw unsafe(absolute, `has mode ${(stat.mode & 0o777).toString(8)}, not 0700`);
  if (realpathSync(absolute) !== absolute) throw unsafe(absolute, 'is reached through a symlink');
  return absolute;
}

/** The snapshot directory for a digest: exactly one 64-hex component below the parent. */
export function snapshotPathFor(parent: string, digest: string): string {
  if (!DIGEST.test(digest)) throw new AgentscmError('INTERNAL', 'snapshot names are 64 lowercase hex');
  return join(resolve(parent), digest);
}

export interface SnapshotResult {
  readonly path: string;
  readonly entries: number;
  readonly bytes: bigint;
}

/** One file of a snapshot: its revision path and mode. */
export interface SnapshotEntry {
  readonly path: string;
  readonly mode: 'file' | 'executable' | 'symlink';
}

/**
 * The one writer of a snapshot's files, whichever source the bytes come from (the local store
 * here, verified fetched objects in remote-objects/): parent/<digest> made afresh, each entry
 * written below it and never through a symlink (symlinks are created last), modes set explicitly
 * (a restrictive umask must not hide the tree from the container user). On any failure the caller
 * calls abort(), which removes the whole snapshot.
 */
export class SnapshotWriter {
  readonly root: string;
  private readonly made: Set<string>;
  private readonly links: { path: string; target: string }[] = [];
  entries = 0;
  bytes = 0n;

  constructor(parent: string, digest: string) {
    const checked = ensurePrivateDir(parent);
    this.root = snapshotPathFor(checked, digest);
    if (existsSync(this.root)) removeSnapshot(this.root);
    mkdirSync(this.root, { mode: 0o755 });
    chmodSync(this.root, 0o755);
    this.made = new Set<string>([this.root]);
  }

  /** Write one entry from its content's chunks. */
  write(entry: SnapshotEntry, chunks: Iterable<Uint8Array>): void {
    this.entries += 1;
    const target = join(this.root, entry.path);
    if (!target.startsWith(`${this.root}/`))
      throw new AgentscmError('PATH_INVALID', `revision path ${JSON.stringify(entry.path)} leaves the snapshot`);
    makeParents(dirname(target), this.made);
    if (entry.mode === 'symlink') {
      // Symlinks are created last so that no later file is ever written through one.
      const linked = Buffer.concat([...chunks]);
      this.bytes += BigInt(linked.byteLength);
      this.links.push({ path: target, target: linked.toString('utf8') });
      return;
    }
    const mode = entry.mode === 'executable' ? 0o755 : 0o644;
    const fd = openSync(target, 'wx', mode);
    try {
      fchmodSync(fd, mode);
      for (const chunk of chunks) {
        this.bytes += BigInt(chunk.byteLength);
        writeSync(fd, chunk);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Create the symlinks; the snapshot is complete. */
  finish(): SnapshotResult {
    // No fsync: a snapshot is transient (a crash discards it with its attempt) and the container
    // reads it through the page cache; flushing would only cost the step its latency.
    for (const link of this.links) symlinkSync(link.target, link.path);
    return { path: this.root, entries: this.entries, bytes: this.bytes };
  }

  /** Remove the snapshot after a failure; the error as an AgentscmError (IO_ERROR for a file system one). */
  abort(error: unknown, revision: string): AgentscmError {
    removeSnapshot(this.root);
    if (error instanceof AgentscmError) return error;
    return new AgentscmError('IO_ERROR', `cannot materialize revision ${revision}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** INPUT_TOO_LARGE unless a revision of `entries` files and `bytes` bytes fits a snapshot. */
export function checkSnapshotSize(revision: string, entries: number, bytes: bigint): void {
  if (entries > SNAPSHOT_LIMITS.maxEntries || bytes > BigInt(SNAPSHOT_LIMITS.maxTotalBytes)) {
    throw new AgentscmError(
      'INPUT_TOO_LARGE',
      `revision ${revision} has ${entries} files and ${bytes} bytes; a snapshot ` +
        `holds at most ${SNAPSHOT_LIMITS.maxEntries} files and ${SNAPSHOT_LIMITS.maxTotalBytes} bytes`,
    );
  }
}

/** Write the exact bytes of `revision` to parent/<digest>; a leftover directory of that name is replaced. */
export function materializeSnapshot(
  auth: Authority,
  input: { repository: string; revision: string; parent: string; digest: string },
): SnapshotResult {
  const revision = getRevision(auth, input.repository, input.revision);
  checkSnapshotSize(input.revision, revision.entry_count, revision.total_bytes);
  const writer = new SnapshotWriter(input.parent, input.digest);
  try {
    for (const entry of iterateRevisionEntries(auth, input.repository, input.revision))
      writer.write(entry, streamBlob(auth, entry.blob));
    return writer.finish();
  } catch (error) {
    throw writer.abort(error, input.revision);
  }
}

function makeParents(dir: string, made: Set<string>): void {
  if (made.has(dir)) return;
  makeParents(dirname(dir), made);
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  made.add(dir);
}

/** Remove a snapshot and confirm it is gone; returns false when it could not be confirmed. */
export function removeSnapshot(path: string): boolean {
  try {
    rmSync(path, { recursive: true, force: true, maxRetries: 2 });
  } catch {
    return false;
  }
  return !existsSync(path);
}
