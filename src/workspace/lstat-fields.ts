/**
 * lstat(2) for the workspace scan without a `Stats` object per file. Node 20's `lstatSync`
 * builds a `Stats` with four eager `Date`s for every call; a scan of 10,000 files spends about
 * half of its stat pass on those objects (docs/workspace.md "Performance"). The fs binding under
 * `lstatSync` returns the raw fields in a typed array it reuses; `lstatFields` reads the five
 * the scan keeps from it, computing the times with the same arithmetic as `Stats`, so that every
 * value is the number `lstatSync` gives.
 *
 * The binding is not a public API. It is used only after a self-check: on first use the fields
 * of this module's own file and directory are read both ways and must agree, and the binding must throw
 * the same error as `lstatSync` for a missing path. Otherwise — another Node version, a changed
 * signature, `process.binding` gone — every call goes through `lstatSync`. Tests force either
 * path (`useLstatFallback`) and compare them file by file.
 */
import { constants, lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The fields of the last `lstatFields` call (read them before the next call). */
export interface LstatFields {
  /** st_mode: type and permission bits. */
  mode: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

type RawLstat = (path: string, bigint: false, req: undefined, throwIfNoEntry: true) => Float64Array;

// Offsets in the binding's array: dev, mode, nlink, uid, gid, rdev, blksize, ino, size, blocks,
// then seconds and nanoseconds of atime, mtime, ctime, birthtime.
const MODE = 1;
const INO = 7;
const SIZE = 8;
const MTIME_SEC = 12;
const CTIME_SEC = 14;
const MS_PER_SEC = 1000;
const NS_PER_MS = 1_000_000;

/** Milliseconds from the seconds at `at` and the nanoseconds after them, as `Stats` computes them. */
function msAt(values: Float64Array, at: number): number {
  return (values[at] as number) * MS_PER_SEC + (values[at + 1] as number) / NS_PER_MS;
}

const fields: LstatFields = { mode: 0, size: 0, mtimeMs: 0, ctimeMs: 0, ino: 0 };
/** undefined: not checked yet; null: use lstatSync. */
let raw: RawLstat | null | undefined;

/** Force lstatSync (true) or let the next call check the binding again (false): for tests. */
export function useLstatFallback(fallback: boolean): void {
  raw = fallback ? null : undefined;
}

/** Whether calls currently read the binding (after its self-check). */
export function lstatFieldsFast(): boolean {
  return resolveRaw() !== null;
}

/**
 * lstat(2) of `path` (a string as lstatSync takes it). Throws what lstatSync throws. The
 * returned object is reused by the next call.
 */
export function lstatFields(path: string): LstatFields {
  const fast = raw === undefined ? resolveRaw() : raw;
  // The binding reads a path as a C string: one with a NUL byte goes to lstatSync's refusal.
  if (fast === null || path.includes('\u0000')) {
    const stat = lstatSync(path);
    fields.mode = stat.mode;
    fields.size = stat.size;
    fields.mtimeMs = stat.mtimeMs;
    fields.ctimeMs = stat.ctimeMs;
    fields.ino = stat.ino;
    return fields;
  }
  const values = fast(path, false, undefined, true);
  fields.mode = values[MODE] as number;
  fields.size = values[SIZE] as number;
  fields.mtimeMs = msAt(values, MTIME_SEC);
  fields.ctimeMs = msAt(values, CTIME_SEC);
  fields.ino = values[INO] as number;
  return fields;
}

const { S_IFMT, S_IFREG, S_IFDIR, S_IFLNK } = constants;

/** The file type bits of st_mode. */
export function fileType(mode: number): 'file' | 'directory' | 'symlink' | 'other' {
  const type = mode & S_IFMT;
  if (type === S_IFREG) return 'file';
  if (type === S_IFDIR) return 'directory';
  if (type === S_IFLNK) return 'symlink';
  return 'other';
}

function resolveRaw(): RawLstat | null {
  if (raw !== undefined) return raw;
  raw = null;
  try {
    const candidate = loadBinding();
    if (candidate !== null && agrees(candidate)) raw = candidate;
  } catch {
    // Anything unexpected from the binding: stay on lstatSync.
  }
  return raw;
}

function loadBinding(): RawLstat | null {
  const access = (process as unknown as { binding?: (name: string) => unknown }).binding;
  if (typeof access !== 'function') return null;
  // process.binding warns only under --pending-deprecation; this module must not print.
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  let binding: unknown;
  try {
    binding = access.call(process, 'fs');
  } finally {
    process.noDeprecation = quiet;
  }
  const lstat = (binding as { lstat?: unknown } | null)?.lstat;
  if (typeof lstat !== 'function') return null;
  return (path, bigint, req, throwIfNoEntry) =>
    (lstat as (...args: unknown[]) => unknown).call(binding, path, bigint, req, throwIfNoEntry) as Float64Array;
}

/** The binding gives lstatSync's values for this module's file and directory, and its error for a missing path. */
function agrees(candidate: RawLstat): boolean {
  const here = fileURLToPath(import.meta.url);
  for (const path of [here, dirname(here)]) {
    const values = candidate(path, false, undefined, true);
    if (!(values instanceof Float64Array) || values.length < 18) return false;
    const stat = lstatSync(path);
    if (values[MODE] !== stat.mode || values[INO] !== stat.ino || values[SIZE] !== stat.size) return false;
    if (msAt(values, MTIME_SEC) !== stat.mtimeMs || msAt(values, CTIME_SEC) !== stat.ctimeMs) return false;
  }
  const missing = join(dirname(here), `.agentscm-lstat-check-${process.pid}-missing`);
  let expected: string | undefined;
  let got: string | undefined;
  try {
    lstatSync(missing);
  } catch (error) {
    expected = (error as NodeJS.ErrnoException).code;
  }
  try {
    candidate(missing, false, undefined, true);
  } catch (error) {
    got = (error as NodeJS.ErrnoException).code;
  }
  return expected !== undefined && got === expected;
}
