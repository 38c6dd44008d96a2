/**
 * The stat cache of a workspace's base tree as one binary value (docs/workspace.md "Stat cache"):
 * the whole list encoded in one buffer, so loading it costs one read and one pass. Encoding,
 * decoding and reading it in place; the database rows that hold it are src/workspace/state.ts's.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { EntryMode, RevisionEntry } from '../native/revisions.js';

/**
 * A stat snapshot: what the cache compares to decide whether a file must be hashed again.
 * Plain-number stats (not bigint): three times cheaper per lstat, and the millisecond float
 * keeps sub-microsecond resolution, which is all the equality test and racy check need.
 */
export interface StatSnapshot {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
}

export interface CachedEntry extends RevisionEntry {
  readonly stat: StatSnapshot | null;
  readonly cacheValid: boolean;
}

const CACHE_FORMAT = 1;
const MODE_CODES: readonly EntryMode[] = ['file', 'executable', 'symlink'];
const FLAG_STAT = 4;
const FLAG_VALID = 8;
const TWO_32 = 2 ** 32;
const SAFE_SIZE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The stat cache as one value: u8 format (1), u32be count, then per entry u16be path length,
 * the path's UTF-8 bytes, u8 flags (mode index in bits 0–1, 4: stat present, 8: cache valid),
 * u64be size, the 32 digest bytes, and with a stat four f64be (size, mtime ms, ctime ms, inode).
 */
export function encodeStatCache(entries: readonly CachedEntry[]): Buffer {
  // Sized first, then written in place: no intermediate buffer per path.
  let length = 5;
  for (const entry of entries)
    length += 2 + Buffer.byteLength(entry.path, 'utf8') + 1 + 8 + 32 + (entry.stat === null ? 0 : 32);
  const out = Buffer.allocUnsafe(length);
  out.writeUInt8(CACHE_FORMAT, 0);
  out.writeUInt32BE(entries.length, 1);
  let at = 5;
  for (const entry of entries) {
    const pathLength = out.write(entry.path, at + 2, 'utf8');
    out.writeUInt16BE(pathLength, at);
    at += 2 + pathLength;
    const stat = entry.stat;
    out[at] =
      MODE_CODES.indexOf(entry.mode) |
      (stat === null ? 0 : FLAG_STAT) |
      (entry.cacheValid && stat !== null ? FLAG_VALID : 0);
    // A size below 2^53 (every real one) is written as two u32 halves without BigInt arithmetic.
    const size = entry.size;
    if (size >= 0n && size <= SAFE_SIZE) {
      const n = Number(size);
      out.writeUInt32BE(Math.floor(n / TWO_32), at + 1);
      out.writeUInt32BE(n % TWO_32, at + 5);
    } else out.writeBigUInt64BE(size, at + 1);
    out.write(entry.blob, at + 9, 32, 'hex');
    at += 41;
    if (stat !== null) {
      out.writeDoubleBE(stat.size, at);
      out.writeDoubleBE(stat.mtimeMs, at + 8);
      out.writeDoubleBE(stat.ctimeMs, at + 16);
      out.writeDoubleBE(stat.ino, at + 24);
      at += 32;
    }
  }
  return out;
}

function cacheCorrupt(why: string): AgentscmError {
  return new AgentscmError('STORE_CORRUPT', `the workspace stat cache is damaged: ${why}`, {
    hint: 'remove .agentscm/ of this workspace and run `agentscm init-repo` for it again',
  });
}

/** The entries of an encoded stat cache, keyed by path. */
export function decodeStatCache(data: Buffer): Map<string, CachedEntry> {
  const map = new Map<string, CachedEntry>();
  if (data.length < 5 || data.readUInt8(0) !== CACHE_FORMAT) throw cacheCorrupt('unknown format');
  const count = data.readUInt32BE(1);
  let at = 5;
  try {
    for (let i = 0; i < count; i++) {
      const pathLength = data.readUInt16BE(at);
      const path = data.toString('utf8', at + 2, at + 2 + pathLength);
      at += 2 + pathLength;
      const flags = data.readUInt8(at);
      const mode = MODE_CODES[flags & 3];
      if (mode === undefined) throw cacheCorrupt(`entry ${i} has an unknown mode`);
      const size = data.readBigUInt64BE(at + 1);
      if (at + 41 > data.length) throw cacheCorrupt('it ends inside an entry');
      const blob = data.toString('hex', at + 9, at + 41);
      at += 41;
      let stat: StatSnapshot | null = null;
      if ((flags & FLAG_STAT) !== 0) {
        stat = {
          size: data.readDoubleBE(at),
          mtimeMs: data.readDoubleBE(at + 8),
          ctimeMs: data.readDoubleBE(at + 16),
          ino: data.readDoubleBE(at + 24),
        };
        at += 32;
      }
      map.set(path, { path, mode, size, blob, stat, cacheValid: (flags & FLAG_VALID) !== 0 && stat !== null });
    }
  } catch (error) {
    if (error instanceof AgentscmError) throw error;
    throw cacheCorrupt('it ends inside an entry');
  }
  if (at !== data.length) throw cacheCorrupt('bytes follow the last entry');
  return map;
}

/** An empty stat cache (no entries), as encoded. */
export const EMPTY_STAT_CACHE: Buffer = encodeStatCache([]);

/**
 * An encoded stat cache read in place (a checkpoint compares it with the scan without decoding
 * it): the start offset of every entry, and the offset its flags byte is at (after its path).
 * Entry i spans starts[i] to starts[i + 1]; the layout is encodeStatCache's.
 */
export interface StatCacheView {
  readonly data: Buffer;
  readonly count: number;
  /** count + 1 offsets: where each entry starts, then the end of the data. */
  readonly starts: Int32Array;
  /** Offset of each entry's flags byte (the u8 after its path). */
  readonly flagsAt: Int32Array;
}

/** Bytes of an entry after its path: flags, size, digest; plus the stat snapshot when present. */
export const ENTRY_FIXED_BYTES = 1 + 8 + 32;
export const ENTRY_STAT_BYTES = 32;
export { FLAG_STAT, FLAG_VALID, MODE_CODES };

/** Index an encoded stat cache (one pass over its lengths; STORE_CORRUPT as decodeStatCache). */
export function indexStatCache(data: Buffer): StatCacheView {
  if (data.length < 5 || data[0] !== CACHE_FORMAT) throw cacheCorrupt('unknown format');
  const count = data.readUInt32BE(1);
  if (count > (data.length - 5) / (2 + ENTRY_FIXED_BYTES)) throw cacheCorrupt('it ends inside an entry');
  const starts = new Int32Array(count + 1);
  const flagsAt = new Int32Array(count);
  let at = 5;
  for (let i = 0; i < count; i++) {
    starts[i] = at;
    if (at + 2 > data.length) throw cacheCorrupt('it ends inside an entry');
    const flags = at + 2 + ((data[at] as number) << 8) + (data[at + 1] as number);
    if (flags + ENTRY_FIXED_BYTES > data.length) throw cacheCorrupt('it ends inside an entry');
    const bits = data[flags] as number;
    if ((bits & 3) === 3) throw cacheCorrupt(`entry ${i} has an unknown mode`);
    flagsAt[i] = flags;
    at = flags + ENTRY_FIXED_BYTES + ((bits & FLAG_STAT) !== 0 ? ENTRY_STAT_BYTES : 0);
  }
  if (at !== data.length)
    throw cacheCorrupt(at > data.length ? 'it ends inside an entry' : 'bytes follow the last entry');
  starts[count] = at;
  return { data, count, starts, flagsAt };
}

/** One entry encoded as encodeStatCache writes it inside the whole cache (no header). */
export function encodeStatCacheEntry(entry: CachedEntry): Buffer {
  return encodeStatCache([entry]).subarray(5);
}

/** A whole stat cache from its entries' encodings (each as encodeStatCacheEntry or copied from a cache). */
export function joinStatCache(count: number, pieces: readonly Buffer[], length: number): Buffer {
  const header = Buffer.allocUnsafe(5);
  header[0] = CACHE_FORMAT;
  header.writeUInt32BE(count, 1);
  return Buffer.concat([header, ...pieces], 5 + length);
}
