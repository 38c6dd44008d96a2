/**
 * The two file-system snapshots of an observed run (docs/agent-state.md "What is observed"):
 *
 * - the scope snapshot: the declared write scopes, hashed, so that git-ignored outputs inside a
 *   scope count as changes; at most 20 scopes, 1,000 files and 64 MiB; never follows a
 *   symlink; never enters `.git`;
 * - the metadata guard: every path outside the write scopes, ignored files included, by
 *   metadata only (type, mode, size, mtime, ctime, inode; no hashing); at most 20,000 paths.
 *
 * Both fail closed: a bound, an I/O error or an entry that vanishes between listing and lstat
 * (a snapshot race) makes the snapshot incomplete, and an incomplete snapshot keeps a run out of
 * `completed`.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';

import { isScopeWithin } from '../contracts/agent-state.js';

export const SCOPE_SNAPSHOT_LIMITS = { scopes: 20, files: 1000, bytes: 64 * 1024 * 1024 } as const;
export const GUARD_PATH_LIMIT = 20_000;

export interface SnapshotLimits {
  readonly scopes: number;
  readonly files: number;
  readonly bytes: number;
}

/**
 * Fault injection for tests: called with each repository-relative path just before it is
 * examined; an error it throws is handled as the lstat's own (ENOENT a race, anything else an
 * I/O error).
 */
export interface SnapshotHooks {
  readonly beforeEntry?: (path: string) => void;
}

export type SnapshotProblem = 'bound' | 'race' | 'io_error' | 'symlink';

export interface FsSnapshot {
  readonly complete: boolean;
  readonly problem: SnapshotProblem | null;
  readonly detail: string | null;
  readonly entries: ReadonlyMap<string, string>;
  readonly files: number;
  readonly bytes: number;
}

class Incomplete extends Error {
  constructor(
    readonly problem: SnapshotProblem,
    readonly detail: string,
  ) {
    super(detail);
  }
}

function lstatOrRace(root: string, path: string, hooks: SnapshotHooks | undefined): BigIntStats {
  try {
    hooks?.beforeEntry?.(path);
    return lstatSync(path === '.' ? root : join(root, path), { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Incomplete('race', `${path} vanished while the snapshot was taken`);
    throw new Incomplete('io_error', `cannot examine ${path}: ${(error as Error).message}`);
  }
}

function listOrFail(root: string, path: string): string[] {
  try {
    return readdirSync(path === '.' ? root : join(root, path)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Incomplete('race', `${path} vanished while the snapshot was taken`);
    throw new Incomplete('io_error', `cannot list ${path}: ${(error as Error).message}`);
  }
}

const child = (dir: string, name: string): string => (dir === '.' ? name : `${dir}/${name}`);

function result(entries: Map<string, string>, files: number, bytes: number, error?: unknown): FsSnapshot {
  if (error === undefined) return { complete: true, problem: null, detail: null, entries, files, bytes };
  if (error instanceof Incomplete)
    return { complete: false, problem: error.problem, detail: error.detail, entries, files, bytes };
  throw error instanceof Error ? error : new Error('unexpected snapshot failure', { cause: error });
}

/** A scope reached through a symlinked directory would be read outside the repository: refuse it. */
function checkNoSymlinkAncestor(root: string, scope: string): void {
  if (scope === '.') return;
  const parts = scope.split('/');
  for (let i = 1; i < parts.length; i++) {
    const ancestor = parts.slice(0, i).join('/');
    let st;
    try {
      st = lstatSync(join(root, ancestor));
    } catch {
      return; // a missing ancestor: the scope does not exist yet
    }
    if (st.isSymbolicLink())
      throw new Incomplete(
        'symlink',
        `${ancestor}, a component of the scope ${scope}, is a symlink; it is not followed`,
      );
  }
}

/** Remove scopes nested in another one, so that each file is seen once. */
function outermost(scopes: readonly string[]): string[] {
  return [...new Set(scopes)].filter(
    (scope) => !scopes.some((other) => other !== scope && isScopeWithin(other, scope)),
  );
}

/** Hash every file of the write scopes (docs/agent-state.md "What is observed"). */
export function takeScopeSnapshot(
  root: string,
  scopes: readonly string[],
  limits: SnapshotLimits = SCOPE_SNAPSHOT_LIMITS,
  hooks?: SnapshotHooks,
): FsSnapshot {
  const entries = new Map<string, string>();
  let files = 0;
  let bytes = 0;
  try {
    if (scopes.length > limits.scopes)
      throw new Incomplete('bound', `${scopes.length} scopes, more than ${limits.scopes}`);
    const visit = (path: string, top: boolean): void => {
      let st: BigIntStats;
      if (top) {
        checkNoSymlinkAncestor(root, path);
        try {
          hooks?.beforeEntry?.(path);
          st = lstatSync(path === '.' ? root : join(root, path), { bigint: true });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // a scope that does not exist yet
          throw new Incomplete('io_error', `cannot examine ${path}: ${(error as Error).message}`);
        }
      } else st = lstatOrRace(root, path, hooks);
      if (st.isDirectory()) {
        entries.set(path, `d:${st.mode}`);
        for (const name of listOrFail(root, path)) if (name !== '.git') visit(child(path, name), false);
        return;
      }
      files++;
      if (files > limits.files) throw new Incomplete('bound', `more than ${limits.files} files in the declared scopes`);
      if (st.isSymbolicLink()) {
        let target: string;
        try {
          target = readlinkSync(join(root, path));
        } catch (error) {
          throw new Incomplete(
            (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'race' : 'io_error',
            `cannot read the link ${path}`,
          );
        }
        entries.set(path, `l:${st.mode}:${target}`);
        return;
      }
      if (!st.isFile()) {
        entries.set(path, `o:${st.mode}`);
        return;
      }
      const size = Number(st.size);
      if (bytes + size > limits.bytes)
        throw new Incomplete('bound', `more than ${limits.bytes} bytes in the declared scopes`);
      let content: Buffer;
      try {
        content = readFileSync(join(root, path));
      } catch (error) {
        throw new Incomplete(
          (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'race' : 'io_error',
          `cannot read ${path}: ${(error as Error).message}`,
        );
      }
      if (content.length !== size) throw new Incomplete('race', `${path} changed size while it was read`);
      bytes += size;
      entries.set(path, `f:${st.mode}:${size}:${createHash('sha256').update(content).digest('hex')}`);
    };
    for (const scope of outermost(scopes)) visit(scope, true);
  } catch (error) {
    return result(entries, files, bytes, error);
  }
  return result(entries, files, bytes);
}

/** Metadata of every path outside the write scopes, ignored files included (docs/agent-state.md "What is observed"). */
export function takeMetadataGuard(
  root: string,
  writeScopes: readonly string[],
  limit = GUARD_PATH_LIMIT,
  hooks?: SnapshotHooks,
): FsSnapshot {
  const entries = new Map<string, string>();
  const excluded = outermost(writeScopes);
  try {
    if (excluded.includes('.')) return result(entries, 0, 0);
    const visit = (dir: string): void => {
      for (const name of listOrFail(root, dir)) {
        if (name === '.git') continue;
        const path = child(dir, name);
        if (excluded.some((scope) => isScopeWithin(scope, path))) continue;
        if (entries.size >= limit)
          throw new Incomplete('bound', `more than ${limit} paths outside the declared scopes`);
        const st = lstatOrRace(root, path, hooks);
        if (st.isDirectory()) {
          // Directories by type and mode only: entries appearing or leaving show as paths.
          entries.set(path, `d:${st.mode}`);
          visit(path);
        } else {
          const type = st.isSymbolicLink() ? 'l' : st.isFile() ? 'f' : 'o';
          entries.set(path, `${type}:${st.mode}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}`);
        }
      }
    };
    visit('.');
  } catch (error) {
    return result(entries, entries.size, 0, error);
  }
  return result(entries, entries.size, 0);
}

/** Paths whose entry differs between two snapshots, sorted. */
export function snapshotChanges(before: FsSnapshot, after: FsSnapshot): string[] {
  const changed = new Set<string>();
  for (const [path, value] of before.entries) if (after.entries.get(path) !== value) changed.add(path);
  for (const [path, value] of after.entries) if (before.entries.get(path) !== value) changed.add(path);
  return [...changed].sort();
}
