/**
 * The store side of the hub's object routes (docs/wire.md "Fetching a claimed revision"), run in
 * the task worker under the grant it authorized: the claim named must be a live collector claim
 * of that grant (its attempt active, the grant live at the claimed generation), and every object
 * asked for must be reachable from the claim's revision.
 *
 * Reachability is computed once per revision, by one walk of its trees, and kept for the last
 * REACHABLE_CACHE_REVISIONS revisions asked for (each at most SNAPSHOT_LIMITS.maxEntries files);
 * a request after that is a set lookup, never a walk of the revision.
 */
import { checkDescriptorAgainstAuthority } from '../collector/collect-check.js';
import {
  encodeBatchCount,
  encodeCheckAnswer,
  encodeFrameHeader,
  REMOTE_LIMITS,
} from '../contracts/collector/object-batch.js';
import { AgentscmError } from '../contracts/errors.js';
import { decodeAnyCollectorDescriptor, isReviewDescriptor } from '../contracts/review/collector-descriptor.js';
import { encodeRevision, encodeTree } from '../contracts/tree.js';
import { getBlobInfo, streamBlob } from '../native/blobs.js';
import { prepared, readTransaction, type Authority } from '../native/store.js';
import { readTreeEntries, storedTreeKey } from '../native/trees.js';
import { findTaskWithAttempt } from '../tasks/attempt-rows.js';
import { findCollectorAttempt } from '../tasks/collector/attempts.js';
import type { GrantAuthorization } from '../tasks/grant-guard.js';
import type { Store } from '../tasks/store.js';
import { journalRead } from '../workflows/journal.js';

/** How many revisions' reachable sets the worker keeps (least recently asked goes first). */
export const REACHABLE_CACHE_REVISIONS = 8;

/** One object request: the claim it is made under and what it asks for. */
export type ObjectAsk =
  | { readonly kind: 'revision'; readonly attemptId: string }
  | { readonly kind: 'tree'; readonly attemptId: string; readonly digest: string }
  | { readonly kind: 'blob'; readonly attemptId: string; readonly digest: string }
  | {
      readonly kind: 'batch';
      readonly attemptId: string;
      readonly objects: 'trees' | 'blobs';
      readonly digests: readonly string[];
    }
  | { readonly kind: 'check'; readonly attemptId: string; readonly descriptor: Uint8Array };

interface Reachable {
  readonly revisionBytes: Buffer;
  readonly trees: ReadonlySet<string>;
  readonly blobs: ReadonlySet<string>;
}

function notHeld(attemptId: string, why: string): AgentscmError {
  return new AgentscmError('REMOTE_CLAIM_NOT_HELD', `attempt ${attemptId} ${why}`, {
    hint: 'claim the task with collector_claim under this grant, and fetch while the attempt is live',
  });
}

function notReachable(kind: string, digest: string, attemptId: string): AgentscmError {
  return new AgentscmError(
    'REMOTE_OBJECT_NOT_REACHABLE',
    `${kind} ${digest} is not reachable from the revision of attempt ${attemptId}`,
    { hint: 'ask only for the trees and blobs of the claimed revision, from its root tree down' },
  );
}

/** The reachable sets of the revisions last asked for. */
export class ReachableCache {
  private readonly sets = new Map<string, Reachable>();

  of(auth: Authority, revision: string): Reachable {
    const known = this.sets.get(revision);
    if (known !== undefined) {
      this.sets.delete(revision);
      this.sets.set(revision, known);
      return known;
    }
    const row = prepared(
      auth,
      'SELECT r.parent, r.tree AS tree_key, t.digest AS tree FROM revisions r JOIN trees t ON t.rowid = r.tree ' +
        'WHERE r.id = ?',
    ).get(revision) as { parent: string | null; tree_key: number; tree: string } | undefined;
    if (row === undefined) throw new AgentscmError('STORE_CORRUPT', `revision ${revision} has no stored tree`);
    const trees = new Set<string>();
    const blobs = new Set<string>();
    const walk = (key: number, digest: string): void => {
      if (trees.has(digest)) return;
      trees.add(digest);
      for (const entry of readTreeEntries(auth, key)) {
        if (entry.kind === 'directory') walk(entry.object, entry.digest);
        else blobs.add(entry.digest);
      }
    };
    walk(row.tree_key, row.tree);
    const reachable = { revisionBytes: Buffer.from(encodeRevision(row.parent, row.tree), 'utf8'), trees, blobs };
    if (this.sets.size >= REACHABLE_CACHE_REVISIONS) this.sets.delete(this.sets.keys().next().value as string);
    this.sets.set(revision, reachable);
    return reachable;
  }
}

/** The revision of a live collector claim the authorized grant holds (REMOTE_CLAIM_NOT_HELD otherwise). */
function claimedRevision(auth: Authority, store: Store, authorization: GrantAuthorization, attemptId: string): string {
  const journal = store.journal();
  if (journal === null) throw notHeld(attemptId, 'is not a collector claim (no task journal)');
  return journalRead(journal, () => {
    // A grant revoked or rotated since it authorized this request is refused here.
    authorization.origin.recheck(auth);
    const claim = findCollectorAttempt(journal, attemptId);
    const origin = authorization.origin.origin;
    if (
      claim === null ||
      claim.origin.grant_id !== origin.grant_id ||
      claim.origin.grant_generation !== origin.grant_generation ||
      claim.descriptor.repository_id !== authorization.repository
    )
      throw notHeld(attemptId, 'is not a collector claim of this grant');
    const found = findTaskWithAttempt(journal, claim.task_id, attemptId);
    const attempt = found?.attempt?.() ?? null;
    if (
      found === null ||
      attempt === null ||
      attempt.state !== 'active' ||
      found.task.last_fence !== attempt.attempt.fence
    )
      throw notHeld(attemptId, `is no longer active`);
    return claim.descriptor.subject.revision;
  });
}

function treeBytes(auth: Authority, digest: string): Buffer {
  const key = storedTreeKey(auth, digest);
  if (key === null) throw new AgentscmError('STORE_CORRUPT', `tree ${digest} is reachable but not stored`);
  return Buffer.from(encodeTree(readTreeEntries(auth, key)), 'utf8');
}

function blobBytes(auth: Authority, digest: string): Buffer {
  const info = getBlobInfo(auth, digest);
  if (info === null) throw new AgentscmError('STORE_CORRUPT', `blob ${digest} is reachable but not stored`);
  if (info.size > BigInt(REMOTE_LIMITS.maxBatchBytes))
    throw new AgentscmError(
      'INPUT_TOO_LARGE',
      `blob ${digest} has ${info.size} bytes; the hub serves at most ${REMOTE_LIMITS.maxBatchBytes}`,
      {
        hint: 'a revision for remote collection holds files of at most 64 MiB',
      },
    );
  return Buffer.concat([...streamBlob(auth, digest)]);
}

/**
 * The hub's check of a command descriptor for a collector with no store: the same check a local
 * collect makes against its authority (collect-check.ts), as the grant of `token`, for the claim
 * the route names; answered with what it binds beyond the descriptor.
 */
function checkRemoteDescriptor(store: Store, token: string, attemptId: string, bytes: Uint8Array): Buffer {
  const descriptor = decodeAnyCollectorDescriptor(Buffer.from(bytes));
  if (isReviewDescriptor(descriptor))
    throw new AgentscmError('USAGE', 'a review descriptor is collected on the hub host, with its store', {
      hint: 'run agent-task collect for a review descriptor with --data-dir on the host of the store',
    });
  if (descriptor.attempt.attempt_id !== attemptId) throw notHeld(attemptId, 'is not the attempt of the descriptor');
  const binding = checkDescriptorAgainstAuthority(store, descriptor, token);
  return encodeCheckAnswer(binding);
}

/** The bytes answering `ask` for the grant (one read snapshot of the authority and journal). */
export function readClaimObjects(
  store: Store,
  authorization: GrantAuthorization,
  cache: ReachableCache,
  ask: ObjectAsk,
  token: string,
): Buffer {
  if (ask.kind === 'check') {
    claimedRevision(store.authority(), store, authorization, ask.attemptId);
    return checkRemoteDescriptor(store, token, ask.attemptId, ask.descriptor);
  }
  const auth = store.authority();
  return readTransaction(auth, () => {
    const revision = claimedRevision(auth, store, authorization, ask.attemptId);
    const reachable = cache.of(auth, revision);
    switch (ask.kind) {
      case 'revision':
        return reachable.revisionBytes;
      case 'tree':
        if (!reachable.trees.has(ask.digest)) throw notReachable('tree', ask.digest, ask.attemptId);
        return treeBytes(auth, ask.digest);
      case 'blob':
        if (!reachable.blobs.has(ask.digest)) throw notReachable('blob', ask.digest, ask.attemptId);
        return blobBytes(auth, ask.digest);
      case 'batch': {
        const trees = ask.objects === 'trees';
        for (const digest of ask.digests)
          if (!(trees ? reachable.trees : reachable.blobs).has(digest))
            throw notReachable(trees ? 'tree' : 'blob', digest, ask.attemptId);
        // The longest prefix that fits the batch's bytes, at least the first blob.
        const parts: Buffer[] = [];
        let total = 0;
        let count = 0;
        for (const digest of ask.digests) {
          if (trees) {
            const bytes = treeBytes(auth, digest);
            if (count > 0 && total + bytes.byteLength > REMOTE_LIMITS.maxBatchBytes) break;
            parts.push(encodeFrameHeader(digest, bytes.byteLength), bytes);
            total += bytes.byteLength;
            count += 1;
            continue;
          }
          const info = getBlobInfo(auth, digest);
          if (info === null) throw new AgentscmError('STORE_CORRUPT', `blob ${digest} is reachable but not stored`);
          if (count > 0 && BigInt(total) + info.size > BigInt(REMOTE_LIMITS.maxBatchBytes)) break;
          const bytes = blobBytes(auth, digest);
          parts.push(encodeFrameHeader(digest, bytes.byteLength), bytes);
          total += bytes.byteLength;
          count += 1;
        }
        return Buffer.concat([encodeBatchCount(count), ...parts]);
      }
    }
  });
}
