/**
 * The docker executable's SHA-256, kept under the collector's state directory
 * (docs/command-collector.md "The executable hash cache"). The executable is hashed into the
 * runtime identity on every collect but never run, and hashing it costs a read of the whole
 * file; the cache keeps the digest keyed by the file's device, inode, size, mtime and ctime
 * (nanoseconds, as git's index keys files), and any difference hashes it again. Replacing the
 * file, writing it in place or touching its mode changes the ctime, which no unprivileged
 * process can set back.
 *
 * A digest is only kept when the file's stat is the same before and after hashing and its ctime
 * is more than RACY_MS in the past: a write in the same clock tick as the stat could otherwise
 * leave every key field unchanged (git's "racily clean" entries).
 */
import { readFileSync, renameSync, statSync, writeFileSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';

import { hashExecutable } from './runtime-identity.js';

/** The cache file inside the collector state directory. */
export const EXECUTABLE_HASH_CACHE = 'executable-hash.json';
/** A file changed this recently is hashed every time (see module comment). */
const RACY_MS = 2_000n;
/** A cache file larger than this is ignored (it holds one small entry). */
const MAX_CACHE_BYTES = 4096;

interface CacheEntry {
  readonly version: 1;
  readonly path: string;
  readonly key: string;
  readonly sha256: string;
}

function keyOf(stat: BigIntStats): string {
  return [stat.dev, stat.ino, stat.size, stat.mtimeNs, stat.ctimeNs].map(String).join(':');
}

function readEntry(file: string): CacheEntry | null {
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_CACHE_BYTES) return null;
    const value = JSON.parse(bytes.toString('utf8')) as Partial<CacheEntry>;
    if (
      value.version !== 1 ||
      typeof value.path !== 'string' ||
      typeof value.key !== 'string' ||
      typeof value.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(value.sha256)
    )
      return null;
    return value as CacheEntry;
  } catch {
    return null;
  }
}

function statOrNull(path: string): BigIntStats | null {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * The executable's SHA-256 (hashExecutable's checks and errors), from the cache in `stateDir`
 * when the file's key is unchanged, else hashed and, when the file is settled, kept. A cache that
 * cannot be read or written only costs the hash.
 */
export function cachedExecutableHash(path: string, stateDir: string, nowMs: number = Date.now()): string {
  const file = join(stateDir, EXECUTABLE_HASH_CACHE);
  const before = statOrNull(path);
  const cached = before === null ? null : readEntry(file);
  if (before !== null && cached !== null && cached.path === path && cached.key === keyOf(before)) {
    return cached.sha256;
  }
  const sha256 = hashExecutable(path);
  const after = statOrNull(path);
  const settled =
    before !== null &&
    after !== null &&
    keyOf(before) === keyOf(after) &&
    BigInt(nowMs) * 1_000_000n - after.ctimeNs > RACY_MS * 1_000_000n;
  if (settled) {
    const entry: CacheEntry = { version: 1, path, key: keyOf(after), sha256 };
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
      renameSync(temporary, file);
    } catch {
      // Not kept: the next call hashes again.
    }
  }
  return sha256;
}
