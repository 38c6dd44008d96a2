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

/** Write the exact bytes of `revision` to parent/<digest>; a leftover directory of that name is replaced. */
export function materializeSnapshot(
  auth: Authority,
  input: { repository: string; revision: string; parent: string; digest: string },
): SnapshotResult {
  const revision = getRevision(auth, input.repository, input.revision);
  if (
    revision.entry_count > SNAPSHOT_LIMITS.maxEntries ||
    revision.total_bytes > BigInt(SNAPSHOT_LIMITS.maxTotalBytes)
  ) {
    throw new AgentscmError(
      'INPUT_TOO_LARGE',
      `revision ${input.revision} has ${revision.entry_count} files and ${revision.total_bytes} bytes; a snapshot ` +
        `holds at most ${SNAPSHOT_LIMITS.maxEntries} files and ${SNAPSHOT_LIMITS.maxTotalBytes} bytes`,
    );
  }
  const parent = ensurePrivateDir(input.parent);
  const root = snapshotPathFor(parent, input.digest);
  if (existsSync(root)) removeSnapshot(root);
  mkdirSync(root, { mode: 0o755 });
  // Modes are set explicitly: a restrictive umask must not hide the tree from the container user.
  chmodSync(root, 0o755);
  const made = new Set<string>([root]);
  const links: { path: string; target: string }[] = [];
  let entries = 0;
  let bytes = 0n;
  try {
    for (const entry of iterateRevisionEntries(auth, input.repository, input.revision)) {
      entries += 1;
      bytes += entry.size;
      const target = join(root, entry.path);
      if (!target.startsWith(`${root}/`))
        throw new AgentscmError('PATH_INVALID', `revision path ${JSON.stringify(entry.path)} leaves the snapshot`);
      makeParents(dirname(target), made);
      if (entry.mode === 'symlink') {
        // Symlinks are created last so that no later file is ever written through one.
        links.push({ path: target, target: Buffer.concat([...streamBlob(auth, entry.blob)]).toString('utf8') });
        continue;
      }
      const mode = entry.mode === 'executable' ? 0o755 : 0o644;
      const fd = openSync(target, 'wx', mode);
      try {
        fchmodSync(fd, mode);
        for (const chunk of streamBlob(auth, entry.blob)) writeSync(fd, chunk);
      } finally {
        closeSync(fd);
      }
    }
    // No fsync: a snapshot is transient (a crash discards it with its attempt) and the container
    // reads it through the page cache; flushing would only cost the step its latency.
    for (const link of links) symlinkSync(link.target, link.path);
  } catch (error) {
    removeSnapshot(root);
    if (error instanceof AgentscmError) throw error;
    throw new AgentscmError('IO_ERROR', `cannot materialize revision ${input.revision}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return { path: root, entries, bytes };
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
