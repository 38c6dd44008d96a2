/**
 * From a complete scan to a tree: reuse the stat cache where it proves a file unchanged, hash
 * everything else (all of it with `full`), store new blobs in bounded batches, and work out
 * how the tree differs from the workspace base. Over 400 lines on purpose: its two paths (a
 * decoded base for init-repo and status, the encoded cache for checkpoint) share the cache's
 * trust rules and are read side by side.
 */
import { AgentscmError } from '../contracts/errors.js';
import { compareUtf8 } from '../contracts/paths.js';
import type { FlatEntry } from '../contracts/tree.js';
import { BLOB_CHUNK_BYTES, isBlobStored, putChunkedBlob, putSmallBlob } from '../native/blobs.js';
import type { EntryMode } from '../native/revisions.js';
import { writeTransaction, type Authority } from '../native/store.js';
import { readFileContent, scratchTarget, streamFileChunks } from './content.js';
import type { ScannedFile, ScanResult } from './scan.js';
import {
  encodeStatCacheEntry,
  FLAG_STAT,
  FLAG_VALID,
  indexStatCache,
  joinStatCache,
  MODE_CODES,
  type CachedEntry,
  type StatCacheView,
  type StatSnapshot,
} from './stat-cache.js';
import { pausePoint } from './test-hooks.js';

/** New small blobs are written in transactions of at most this many bytes (bounds memory). */
export const BLOB_BATCH_BYTES = 16 * 1024 * 1024;

/**
 * A file modified within this long before it was read may be modified again without a new
 * mtime (the kernel stamps files from a clock that lags by up to a tick): such an entry is
 * "racily clean" and is hashed again next time instead of trusted.
 */
const RACY_MARGIN_MS = 50;
/** Filesystems with coarse (whole millisecond or second) timestamps get a wider margin. */
const COARSE_RACY_MARGIN_MS = 2000;

/** Trees of at least this many files report progress while they are checked and hashed. */
export const PROGRESS_MIN_FILES = 1000;

export type ChangeKind = 'added' | 'modified' | 'deleted';

export interface PathChange {
  readonly path: string;
  readonly kind: ChangeKind;
}

export interface TreeSnapshot {
  /** The tree, sorted by path bytes, with fresh stat snapshots: the stat cache a commit installs. */
  readonly entries: CachedEntry[];
  /** Differences in content or mode from the base, sorted by path. */
  readonly changes: PathChange[];
  /** True when some entry differs from the base in its stat snapshot only (a cache refresh). */
  readonly refreshed: boolean;
  readonly hashedFiles: number;
  readonly hashedBytes: bigint;
  readonly storedBlobs: number;
}

function sameStat(a: StatSnapshot, b: StatSnapshot): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}

/**
 * False when a later write could leave size, mtime and ctime unchanged (git's "racily clean").
 * A filesystem with coarse timestamps stamps both times in whole milliseconds; one whole
 * millisecond alone is chance (one file in a thousand on a microsecond filesystem) or a time
 * set on purpose (an archive's mtime), not coarseness, and keeps the fine margin.
 */
export function cacheTrustworthy(stat: StatSnapshot, readStartMs: number): boolean {
  const coarse = Number.isInteger(stat.mtimeMs) && Number.isInteger(stat.ctimeMs);
  const margin = coarse ? COARSE_RACY_MARGIN_MS : RACY_MARGIN_MS;
  return stat.mtimeMs < readStartMs - margin && stat.ctimeMs < readStartMs - margin;
}

/**
 * Collects new small blobs in one preallocated arena and writes them in one transaction per
 * arena, so memory stays at BLOB_BATCH_BYTES however large the tree is.
 */
class BlobSink {
  private readonly arena = Buffer.allocUnsafe(BLOB_BATCH_BYTES);
  private used = 0;
  private batch: { digest: string; bytes: Buffer }[] = [];
  private readonly queued = new Set<string>();
  stored = 0;

  constructor(private readonly auth: Authority) {}

  /** Memory for the next small file; flushes the arena first if it would not fit. */
  readonly reserve = (size: number): Buffer => {
    if (this.used + size > this.arena.length) this.flush();
    const slice = this.arena.subarray(this.used, this.used + size);
    this.used += size;
    return slice;
  };

  /** Keep the content just read into the last reservation, or give the memory back. */
  small(digest: string, bytes: Buffer, reserved: boolean): void {
    if (this.queued.has(digest) || isBlobStored(this.auth, digest)) {
      if (reserved) this.used -= bytes.byteLength;
      return;
    }
    this.queued.add(digest);
    this.batch.push({ digest, bytes: reserved ? bytes : Buffer.from(bytes) });
  }

  large(file: ScannedFile, digest: string, size: bigint): void {
    if (this.queued.has(digest) || isBlobStored(this.auth, digest)) return;
    this.flush();
    const created = writeTransaction(this.auth, () => putChunkedBlob(this.auth, digest, size, streamFileChunks(file)));
    this.queued.add(digest);
    if (created) this.stored += 1;
  }

  flush(): void {
    if (this.batch.length === 0) return;
    const batch = this.batch;
    this.batch = [];
    // Another process may have stored some of these since they were looked up: putSmallBlob
    // keeps the stored one, and only the new ones count.
    const created = writeTransaction(this.auth, () => {
      let count = 0;
      for (const item of batch) if (putSmallBlob(this.auth, item.bytes, item.digest).created) count += 1;
      pausePoint('checkpoint:in-blob-transaction');
      return count;
    });
    this.used = 0;
    this.stored += created;
  }
}

/**
 * Build the tree of a scan against the base (see module comment). With `auth`, new contents
 * are stored as blobs (complete scans only); without it (status), files are only hashed and
 * an incomplete scan reports no deletions.
 */
export function snapshotTree(
  scan: ScanResult,
  base: ReadonlyMap<string, CachedEntry>,
  options: { auth: Authority | null; full: boolean; onProgress?: (message: string) => void },
): TreeSnapshot {
  // An incomplete scan cannot prove a deletion and must never become a revision.
  if (!scan.complete && options.auth !== null)
    throw new AgentscmError('INTERNAL', 'only a complete scan can be stored');
  const sink = options.auth === null ? null : new BlobSink(options.auth);
  const entries: CachedEntry[] = [];
  const changes: PathChange[] = [];
  let refreshed = false;
  let hashedFiles = 0;
  let hashedBytes = 0n;
  // A large tree reports each tenth of the files checked (PROGRESS_MIN_FILES and more).
  const total = scan.files.length;
  const step = options.onProgress !== undefined && total >= PROGRESS_MIN_FILES ? Math.ceil(total / 10) : 0;
  let checked = 0;
  for (const file of scan.files) {
    if (step > 0 && checked > 0 && checked % step === 0)
      options.onProgress?.(`checked ${checked} of ${total} files, ${hashedFiles} hashed`);
    checked += 1;
    const previous = base.get(file.path);
    let entry: CachedEntry;
    if (
      !options.full &&
      previous !== undefined &&
      previous.cacheValid &&
      previous.stat !== null &&
      previous.mode === file.mode &&
      sameStat(previous.stat, file.stat)
    ) {
      entry = previous;
    } else {
      const readStartMs = Date.now();
      const content = readFileContent(file, sink === null ? scratchTarget : sink.reserve);
      hashedFiles += 1;
      hashedBytes += content.size;
      if (sink !== null) {
        if (content.bytes !== null && content.bytes.byteLength <= BLOB_CHUNK_BYTES)
          sink.small(content.digest, content.bytes, file.mode !== 'symlink');
        else sink.large(file, content.digest, content.size);
      }
      entry = {
        path: file.path,
        mode: file.mode,
        size: content.size,
        blob: content.digest,
        stat: file.stat,
        cacheValid: cacheTrustworthy(file.stat, readStartMs),
      };
    }
    entries.push(entry);
    if (previous === undefined) {
      changes.push({ path: file.path, kind: 'added' });
    } else if (previous.blob !== entry.blob || previous.mode !== entry.mode) {
      changes.push({ path: file.path, kind: 'modified' });
    } else if (entry !== previous) {
      refreshed = true;
    }
  }
  sink?.flush();
  const present = new Set(scan.files.map((f) => f.path));
  const deleted: PathChange[] = [];
  for (const path of base.keys()) {
    if (scan.complete && !present.has(path)) {
      deleted.push({ path, kind: 'deleted' });
    }
  }
  const allChanges =
    deleted.length === 0 ? changes : [...changes, ...deleted].sort((a, b) => compareUtf8(a.path, b.path));
  return { entries, changes: allChanges, refreshed, hashedFiles, hashedBytes, storedBlobs: sink?.stored ?? 0 };
}

/** A checkpoint's tree against the stored stat cache (snapshotAgainstCache). */
export interface CacheSnapshot {
  /** The new stat cache, encoded: the scan's files in path order. */
  readonly cache: Buffer;
  /** Differences in content or mode from the base, sorted by path. */
  readonly changes: PathChange[];
  readonly hashedFiles: number;
  readonly storedBlobs: number;
  /** Sum of the content sizes of the new tree. */
  readonly totalBytes: bigint;
  /** The new cache indexed, when it was rewritten in place (same layout as the old one); else null. */
  readonly view: StatCacheView | null;
}

/**
 * snapshotTree for a checkpoint, against the encoded stat cache of the base (loadBaseCache)
 * instead of a decoded map: the scan (sorted) and the cache (sorted) are merged in one pass,
 * an unchanged entry is compared in place (its stat snapshot read from the cache bytes) and
 * copied into the new cache as it is, runs of them in one copy, so nothing is built per
 * unchanged file. Same rules as snapshotTree: a file is trusted only when its entry is
 * cache-valid (not racily clean), has a stat snapshot equal to the scan's and the same mode;
 * everything else is hashed (all of it with `full`) and stored.
 */
export function snapshotAgainstCache(
  scan: ScanResult,
  baseCache: Buffer,
  options: { auth: Authority; full: boolean; onProgress?: (message: string) => void },
): CacheSnapshot {
  if (!scan.complete) throw new AgentscmError('INTERNAL', 'only a complete scan can be stored');
  const view = indexStatCache(baseCache);
  const { data, count, starts, flagsAt } = view;
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const sink = new BlobSink(options.auth);
  const changes: PathChange[] = [];
  const pieces: Buffer[] = [];
  let length = 0;
  // The run of unchanged entries of the old cache being carried over: [runStart, runEnd).
  let runStart = 0;
  let runEnd = 0;
  const endRun = (): void => {
    if (runEnd > runStart) {
      pieces.push(data.subarray(runStart, runEnd));
      length += runEnd - runStart;
    }
    runStart = runEnd = 0;
  };
  let total = 0;
  let totalBig = 0n;
  let hashedFiles = 0;
  const table = scan.table;
  const { paths, modes, stats } = table;
  const fileCount = table.count;
  const step = options.onProgress !== undefined && fileCount >= PROGRESS_MIN_FILES ? Math.ceil(fileCount / 10) : 0;
  const pathAt = (i: number): string => data.toString('utf8', (starts[i] as number) + 2, flagsAt[i]);
  // compareUtf8(path of cache entry i, path) without decoding the entry in the common case: an
  // ASCII path is compared byte against character (each ASCII character is its one UTF-8
  // byte); anything else is decided on the decoded path.
  const compareAt = (i: number, path: string): number => {
    const from = (starts[i] as number) + 2;
    const bytes = (flagsAt[i] as number) - from;
    const n = bytes < path.length ? bytes : path.length;
    for (let j = 0; j < n; j++) {
      const c = path.charCodeAt(j);
      const b = data[from + j] as number;
      if (c >= 0x80 || b >= 0x80) return compareUtf8(pathAt(i), path);
      if (b !== c) return b - c;
    }
    if (bytes === path.length) return 0;
    return compareUtf8(pathAt(i), path);
  };
  // The new cache is the old one rewritten in place while no entry is added or removed and every
  // entry hashed again keeps its length (the usual edit); otherwise it is joined from pieces.
  let inPlace = true;
  let ci = 0;
  for (let fi = 0; fi < fileCount; fi++) {
    if (step > 0 && fi > 0 && fi % step === 0)
      options.onProgress?.(`checked ${fi} of ${fileCount} files, ${hashedFiles} hashed`);
    const path = paths[fi] as string;
    const mode = modes[fi] as number;
    // Cache entries before this path are files that are gone.
    let order = ci < count ? compareAt(ci, path) : 1;
    while (order < 0) {
      changes.push({ path: pathAt(ci), kind: 'deleted' });
      inPlace = false;
      ci += 1;
      order = ci < count ? compareAt(ci, path) : 1;
    }
    const matched = order === 0;
    const at = matched ? (flagsAt[ci] as number) : -1;
    if (matched) {
      const flags = data[at] as number;
      const s = 4 * fi;
      if (
        !options.full &&
        (flags & (FLAG_STAT | FLAG_VALID)) === (FLAG_STAT | FLAG_VALID) &&
        (flags & 3) === mode &&
        dv.getFloat64(at + 41) === stats[s] &&
        dv.getFloat64(at + 49) === stats[s + 1] &&
        dv.getFloat64(at + 57) === stats[s + 2] &&
        dv.getFloat64(at + 65) === stats[s + 3]
      ) {
        const start = starts[ci] as number;
        const end = starts[ci + 1] as number;
        if (runEnd !== start) {
          endRun();
          runStart = start;
        }
        runEnd = end;
        const high = dv.getUint32(at + 1);
        if (high < 0x200000) total += high * 2 ** 32 + dv.getUint32(at + 5);
        else totalBig += dv.getBigUint64(at + 1);
        ci += 1;
        continue;
      }
    }
    const file = table.file(fi);
    const readStartMs = Date.now();
    const content = readFileContent(file, sink.reserve);
    hashedFiles += 1;
    if (content.bytes !== null && content.bytes.byteLength <= BLOB_CHUNK_BYTES)
      sink.small(content.digest, content.bytes, file.mode !== 'symlink');
    else sink.large(file, content.digest, content.size);
    const entry: CachedEntry = {
      path: file.path,
      mode: file.mode,
      size: content.size,
      blob: content.digest,
      stat: file.stat,
      cacheValid: cacheTrustworthy(file.stat, readStartMs),
    };
    endRun();
    const encoded = encodeStatCacheEntry(entry);
    pieces.push(encoded);
    length += encoded.length;
    totalBig += content.size;
    if (!matched) {
      changes.push({ path, kind: 'added' });
      inPlace = false;
    } else {
      if (((data[at] as number) & 3) !== mode || data.toString('hex', at + 9, at + 41) !== content.digest)
        changes.push({ path, kind: 'modified' });
      // Same path, so the same length unless the old entry had no stat snapshot.
      const start = starts[ci] as number;
      if (inPlace && encoded.length === (starts[ci + 1] as number) - start) encoded.copy(data, start);
      else inPlace = false;
      ci += 1;
    }
  }
  for (; ci < count; ci++) {
    changes.push({ path: pathAt(ci), kind: 'deleted' });
    inPlace = false;
  }
  endRun();
  sink.flush();
  const cache = inPlace ? data : joinStatCache(fileCount, pieces, length);
  return {
    cache,
    changes,
    hashedFiles,
    storedBlobs: sink.stored,
    totalBytes: BigInt(total) + totalBig,
    view: inPlace ? view : null,
  };
}

/**
 * The files of a new tree a revision must be built from when `known` gives the stored digest of
 * every directory with no changed path that lies directly in one with a changed path
 * (unchangedDirectories): all files of the directories on a changed path, and one file of each
 * known directory (buildTrees opens it to take its digest and looks no further). A directory
 * that is neither is given in full, so the result is the tree a full listing gives.
 */
export function revisionInput(
  paths: readonly string[],
  cache: Buffer | StatCacheView,
  known: ReadonlyMap<string, string>,
): FlatEntry[] {
  const { data, flagsAt } = Buffer.isBuffer(cache) ? indexStatCache(cache) : cache;
  const out: FlatEntry[] = [];
  const entryAt = (i: number): FlatEntry => {
    const at = flagsAt[i] as number;
    return {
      path: paths[i] as string,
      mode: MODE_CODES[(data[at] as number) & 3] as EntryMode,
      blob: data.toString('hex', at + 9, at + 41),
    };
  };
  // The paths below one directory are one block of the sorted list: found by binary search, so
  // a known directory costs a few comparisons, not a visit of each of its files.
  const blockEnd = (from: number, hi: number, prefix: string): number => {
    let lo = from + 1;
    let high = hi;
    while (lo < high) {
      const mid = (lo + high) >>> 1;
      if ((paths[mid] as string).startsWith(prefix)) lo = mid + 1;
      else high = mid;
    }
    return lo;
  };
  // Paths lo..hi all start with `prefix` (a directory and "/", or "" for the root).
  const visit = (lo: number, hi: number, prefix: string): void => {
    for (let i = lo; i < hi;) {
      const path = paths[i] as string;
      const slash = path.indexOf('/', prefix.length);
      if (slash < 0) {
        out.push(entryAt(i));
        i += 1;
        continue;
      }
      const dir = path.slice(0, slash);
      const end = blockEnd(i, hi, `${dir}/`);
      if (known.has(dir)) out.push(entryAt(i));
      else visit(i, end, `${dir}/`);
      i = end;
    }
  };
  visit(0, paths.length, '');
  return out;
}
