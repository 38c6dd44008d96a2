/**
 * The collector's state directory journal (docs/collect.md "The state directory": the collector
 * durably reserves an execution before any container exists and retains the signed transfer before
 * upload; collector state is owner-private and non-symlink). One collection per upload request id
 * lives in S/collections/<sha256(upload_request_id)>/:
 * - `descriptor.json`: the canonical descriptor bytes, written before any container exists; its
 *   presence is the reservation, so reopening the state never runs the command again;
 * - `envelope.agscmtr`: the signed transfer envelope, retained before the first upload and never
 *   replaced, so every retry sends the identical bytes;
 * - `upload.json`: the last answer of an upload (informative only).
 * Files are written to a private temporary name, fsynced and linked into place (link never
 * replaces a name), then the directory is fsynced. Snapshots live in S/snapshots/, the only
 * part of S a container sees (one snapshot directory, read-only); the key file and this journal
 * are never below it.
 */
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readSync, renameSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';

import { TRANSFER_LIMITS } from '../contracts/collector/transfer.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { sha256Hex } from '../crypto/sha256.js';
import { createPrivateFileOnce, syncDirectory, unlinkQuietly, writePrivateTemporary } from '../native/private-files.js';
import type { Store } from '../native/store-handle.js';
import { findEnclosingWorkspace } from '../workspace/locate.js';
import { ensurePrivateDir } from './snapshot.js';

export const DESCRIPTOR_FILE = 'descriptor.json';
export const ENVELOPE_FILE = 'envelope.agscmtr';
export const UPLOAD_FILE = 'upload.json';
/** A descriptor is at most 96 KiB; an upload answer is kept only up to this size. */
const MAX_SMALL_FILE = 1024 * 1024;

export interface CollectState {
  /** The absolute, owner-private state directory. */
  readonly root: string;
  readonly collections: string;
  /** The owner-private parent of every snapshot a container mounts. */
  readonly snapshots: string;
}

function unsafe(message: string, cause?: unknown): AgentscmError {
  return new AgentscmError('COLLECT_STATE_UNSAFE', message, {
    hint:
      'pass a --state-dir outside every workspace and data directory, owned by you with mode 0700, e.g. ' +
      '~/.agentscm-collector',
    ...(cause === undefined ? {} : { cause }),
  });
}

function ioError(what: string, error: unknown): never {
  throw new AgentscmError('IO_ERROR', `${what}: ${(error as Error).message}`, { cause: error });
}

/** Whether `path` is `dir` or below it. */
export function isWithin(path: string, dir: string): boolean {
  const a = resolve(path);
  const b = resolve(dir);
  return a === b || a.startsWith(b.endsWith(sep) ? b : `${b}${sep}`);
}

/**
 * Open (creating when missing) the state directory: outside every workspace (a checkpoint would
 * record it) and outside the data directory, owner-private (0700, owned by this user, no symlink
 * on its path), with its collections and snapshots directories. Only the store's data directory
 * is read (no database is opened).
 */
export function openCollectState(stateDir: string, store: Pick<Store, 'dataDir'>): CollectState {
  const root = resolve(stateDir);
  const dataDir = store.dataDir;
  const workspace = findEnclosingWorkspace(root);
  if (workspace !== null)
    throw unsafe(
      `the state directory ${root} is inside the agentscm workspace ${workspace}, where a checkpoint would record it`,
    );
  if (isWithin(root, dataDir) || isWithin(dataDir, root))
    throw unsafe(`the state directory ${root} and the data directory ${resolve(dataDir)} overlap`);
  const privateDir = (path: string): string => {
    try {
      return ensurePrivateDir(path);
    } catch (error) {
      if (isAgentscmError(error) && error.code === 'SNAPSHOT_UNSAFE')
        throw unsafe(error.message.replace(/^snapshot parent /, 'state directory '), error);
      throw error;
    }
  };
  privateDir(root);
  return { root, collections: privateDir(join(root, 'collections')), snapshots: privateDir(join(root, 'snapshots')) };
}

/** The directory of one collection: one digest component, so no id can name another path. */
export function collectionDir(state: CollectState, uploadRequestId: string): string {
  return join(state.collections, sha256Hex(Buffer.from(uploadRequestId, 'utf8')));
}

function createOnce(dir: string, name: string, bytes: Uint8Array): boolean {
  return createPrivateFileOnce(join(dir, name), bytes) === 'created';
}

/** Read a regular file of at most `limit` bytes, or null when it does not exist. */
function readSmall(path: string, limit: number): Buffer | null {
  let stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return ioError(`cannot inspect ${path}`, error);
  }
  if (!stats.isFile()) throw unsafe(`${path} is not a regular file`);
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > limit)
      throw new AgentscmError('COLLECT_STATE_CORRUPT', `${path} is ${size} bytes, more than the ${limit} it may hold`);
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

export type Reservation = { readonly state: 'reserved' } | { readonly state: 'retained'; readonly envelope: Buffer };

/**
 * Reserve the collection of `descriptorBytes` (its canonical bytes) under its upload request id,
 * durably, before any container exists. A collection reserved before with the same descriptor
 * answers what it holds: `retained` with the signed envelope, or COLLECT_INTERRUPTED when it
 * stopped between the reservation and the retention (the command is never run twice). Another
 * descriptor under the same upload request id is COLLECT_STATE_CONFLICT.
 */
export function reserveCollection(
  state: CollectState,
  uploadRequestId: string,
  descriptorBytes: Uint8Array,
  options: { readonly reopen?: boolean } = {},
): { readonly created: boolean } & Reservation {
  const dir = collectionDir(state, uploadRequestId);
  try {
    mkdirSync(dir, { mode: 0o700 });
    syncDirectory(state.collections);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') ioError(`cannot create ${dir}`, error);
  }
  if (createOnce(dir, DESCRIPTOR_FILE, descriptorBytes)) return { created: true, state: 'reserved' };
  const existing = readSmall(join(dir, DESCRIPTOR_FILE), MAX_SMALL_FILE);
  if (existing === null || !existing.equals(Buffer.from(descriptorBytes))) {
    throw new AgentscmError(
      'COLLECT_STATE_CONFLICT',
      `the state directory already holds another descriptor for upload request ${uploadRequestId}`,
      {
        hint:
          'an upload request id names one collection; claim again for a fresh one, or use the descriptor that ' +
          'collection was made from',
        details: { upload_request_id: uploadRequestId },
      },
    );
  }
  const envelope = readRetainedEnvelope(state, uploadRequestId);
  if (envelope !== null) return { created: false, state: 'retained', envelope };
  // A review reopens from its journal, which never makes a reserved call again.
  if (options.reopen === true) return { created: false, state: 'reserved' };
  throw new AgentscmError(
    'COLLECT_INTERRUPTED',
    `the collection for upload request ${uploadRequestId} was reserved but retains no signed envelope: an earlier ` +
      'collect stopped while the command ran or before it signed',
    {
      hint:
        'a reserved collection never runs its command again; claim the task again (reconcile the attempt ' +
        'first) for a fresh collection',
      details: { upload_request_id: uploadRequestId },
    },
  );
}

/** The retained envelope of a collection, or null. */
export function readRetainedEnvelope(state: CollectState, uploadRequestId: string): Buffer | null {
  return readSmall(join(collectionDir(state, uploadRequestId), ENVELOPE_FILE), TRANSFER_LIMITS.maxEnvelopeBytes);
}

/** The descriptor bytes a collection was reserved with, or null. */
export function readReservedDescriptor(state: CollectState, uploadRequestId: string): Buffer | null {
  return readSmall(join(collectionDir(state, uploadRequestId), DESCRIPTOR_FILE), MAX_SMALL_FILE);
}

/** Retain the signed envelope durably before any upload; never replaced once retained. */
export function retainEnvelope(state: CollectState, uploadRequestId: string, envelope: Uint8Array): void {
  const dir = collectionDir(state, uploadRequestId);
  if (createOnce(dir, ENVELOPE_FILE, envelope)) return;
  const existing = readRetainedEnvelope(state, uploadRequestId);
  if (existing === null || !existing.equals(Buffer.from(envelope))) {
    throw new AgentscmError(
      'COLLECT_STATE_CONFLICT',
      `upload request ${uploadRequestId} already retains another envelope`,
      { details: { upload_request_id: uploadRequestId } },
    );
  }
}

/** Keep the last upload answer beside the envelope (replaced by each upload). */
export function recordUploadAnswer(state: CollectState, uploadRequestId: string, answer: Uint8Array): void {
  const dir = collectionDir(state, uploadRequestId);
  const temporary = writePrivateTemporary(join(dir, UPLOAD_FILE), answer.subarray(0, MAX_SMALL_FILE));
  try {
    renameSync(temporary, join(dir, UPLOAD_FILE));
  } catch (error) {
    unlinkQuietly(temporary);
    ioError(`cannot write ${join(dir, UPLOAD_FILE)}`, error);
  }
  syncDirectory(dir);
}
