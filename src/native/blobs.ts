/**
 * Blobs: file contents stored once by plain SHA-256 (issue 2 §3), inside the authority
 * database (no loose-object files, no compression). Contents up to BLOB_CHUNK_BYTES sit inline
 * in `blobs`; larger ones are split into BLOB_CHUNK_BYTES chunks so that no read or write ever
 * holds more than one chunk.
 */
import { AgentscmError } from '../contracts/errors.js';
import { createSha256 } from '../crypto/sha256.js';
import { checkDigest } from './checks.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { prepared, type Authority } from './store.js';

/** Chunk size of large blobs (1 MiB): also the largest buffer a blob read or write holds. */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

export interface BlobInfo {
  /** Plain SHA-256 of the content, 64 lowercase hex. */
  readonly digest: string;
  readonly size: bigint;
}

interface BlobRow {
  rowid: number;
  size: string;
  chunk_count: number;
}

function blobRow(auth: Authority, digest: string): BlobRow | undefined {
  return prepared(auth, 'SELECT rowid, size, chunk_count FROM blobs WHERE digest = ?').get(digest) as
    BlobRow | undefined;
}

/** True when the blob is stored. */
export function hasBlob(auth: Authority, digest: string): boolean {
  checkDigest(digest, 'blob digest');
  return isBlobStored(auth, digest);
}

/** hasBlob for a digest this process computed itself (no pattern check: the hot path of a checkpoint). */
export function isBlobStored(auth: Authority, digest: string): boolean {
  return prepared(auth, 'SELECT 1 FROM blobs WHERE digest = ?').get(digest) !== undefined;
}

/** Size of a stored blob, or null. */
export function getBlobInfo(auth: Authority, digest: string): BlobInfo | null {
  checkDigest(digest, 'blob digest');
  const row = blobRow(auth, digest);
  return row === undefined ? null : { digest, size: u64FromSql(row.size) };
}

/**
 * Store a whole content of at most BLOB_CHUNK_BYTES whose SHA-256 the caller computed (or
 * pass none and it is computed here). Existing blobs are not written again. Call inside a
 * write transaction. Returns true when the blob was new.
 */
export function putSmallBlob(
  auth: Authority,
  bytes: Uint8Array,
  digest?: string,
): { digest: string; created: boolean } {
  if (bytes.byteLength > BLOB_CHUNK_BYTES)
    throw new AgentscmError('INTERNAL', 'putSmallBlob takes at most one chunk; use putChunkedBlob');
  const key = digest ?? createSha256().update(bytes).digest('hex');
  const result = prepared(
    auth,
    'INSERT INTO blobs (digest, size, chunk_count, data) VALUES (?, ?, 0, ?) ON CONFLICT (digest) DO NOTHING',
  ).run(key, u64ToSql(BigInt(bytes.byteLength)), bytes);
  return { digest: key, created: result.changes === 1 };
}

/**
 * Store a large content from a source of chunks (each at most BLOB_CHUNK_BYTES). The chunks
 * are hashed on the way in and must produce `digest` and `size`, otherwise nothing is kept
 * (the caller's transaction rolls back on the thrown WORKSPACE_CHANGED). Call inside a write
 * transaction. Idempotent like putSmallBlob: a blob that another writer stored since the
 * caller last looked (two workspaces of one store checkpointing the same file at once) is
 * left as it is and the source is not read. Returns true when the blob was new.
 */
export function putChunkedBlob(auth: Authority, digest: string, size: bigint, chunks: Iterable<Uint8Array>): boolean {
  const insert = prepared(
    auth,
    'INSERT INTO blobs (digest, size, chunk_count, data) VALUES (?, ?, 0, NULL) ON CONFLICT (digest) DO NOTHING',
  ).run(digest, u64ToSql(size));
  if (insert.changes === 0) return false;
  const rowid = Number(insert.lastInsertRowid);
  const addChunk = prepared(auth, 'INSERT INTO blob_chunks (blob, seq, data) VALUES (?, ?, ?)');
  const hash = createSha256();
  let seq = 0;
  let total = 0n;
  for (const chunk of chunks) {
    if (chunk.byteLength === 0) continue;
    if (chunk.byteLength > BLOB_CHUNK_BYTES)
      throw new AgentscmError('INTERNAL', 'blob chunk larger than BLOB_CHUNK_BYTES');
    hash.update(chunk);
    addChunk.run(rowid, seq, chunk);
    seq += 1;
    total += BigInt(chunk.byteLength);
  }
  const actual = hash.digest('hex');
  if (actual !== digest || total !== size) {
    throw new AgentscmError('WORKSPACE_CHANGED', 'a file changed while it was being stored', {
      hint: 'wait until writers stop and run the command again',
    });
  }
  prepared(auth, 'UPDATE blobs SET chunk_count = ? WHERE rowid = ?').run(seq, rowid);
  return true;
}

function corrupt(digest: string): AgentscmError {
  return new AgentscmError('STORE_CORRUPT', `stored blob ${digest} does not match its digest or size`, {
    hint: 'restore the data directory from a backup; run `sqlite3 authority.sqlite "PRAGMA integrity_check"`',
  });
}

/**
 * Stream a stored blob chunk by chunk (never more than one chunk in memory), verifying its
 * SHA-256 and size at the end: a mismatch throws STORE_CORRUPT after the last chunk.
 * BLOB_NOT_FOUND is reported as INTERNAL since revisions reference only stored blobs.
 */
export function* streamBlob(auth: Authority, digest: string): Generator<Buffer, void, undefined> {
  checkDigest(digest, 'blob digest');
  const row = blobRow(auth, digest);
  if (row === undefined) throw new AgentscmError('STORE_CORRUPT', `blob ${digest} is referenced but not stored`);
  const size = u64FromSql(row.size);
  const hash = createSha256();
  let total = 0n;
  if (row.chunk_count === 0) {
    const inline = prepared(auth, 'SELECT data FROM blobs WHERE rowid = ?').get(row.rowid) as { data: Buffer | null };
    const data = inline.data ?? Buffer.alloc(0);
    hash.update(data);
    total += BigInt(data.byteLength);
    if (hash.digest('hex') !== digest || total !== size) throw corrupt(digest);
    yield data;
    return;
  }
  const chunkAt = prepared(auth, 'SELECT data FROM blob_chunks WHERE blob = ? AND seq = ?');
  for (let seq = 0; seq < row.chunk_count; seq++) {
    const chunk = chunkAt.get(row.rowid, seq) as { data: Buffer } | undefined;
    if (chunk === undefined) throw corrupt(digest);
    hash.update(chunk.data);
    total += BigInt(chunk.data.byteLength);
    if (total > size) throw corrupt(digest);
    if (seq === row.chunk_count - 1 && (hash.digest('hex') !== digest || total !== size)) throw corrupt(digest);
    yield chunk.data;
  }
}

/**
 * Read a whole blob into memory; its stored size is checked against maxBytes BEFORE any
 * content is read (INPUT_TOO_LARGE), and the content is verified against its digest.
 */
export function readBlob(auth: Authority, digest: string, maxBytes: number): Buffer {
  checkDigest(digest, 'blob digest');
  const row = blobRow(auth, digest);
  if (row === undefined) throw new AgentscmError('STORE_CORRUPT', `blob ${digest} is referenced but not stored`);
  const size = u64FromSql(row.size);
  if (size > BigInt(maxBytes)) {
    throw new AgentscmError('INPUT_TOO_LARGE', `blob ${digest} has ${size} bytes, more than the limit of ${maxBytes}`);
  }
  const parts: Buffer[] = [];
  for (const chunk of streamBlob(auth, digest)) parts.push(chunk);
  return parts.length === 1 && parts[0] !== undefined ? parts[0] : Buffer.concat(parts);
}
