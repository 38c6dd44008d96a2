/**
 * `agentscm receipt show` and `receipt export` (issue "Admission", "Offline verification";
 * docs/receipts.md): read a retained v2 receipt by digest or unique prefix (at least 8 hex, as
 * every digest argument), and export it with everything it rests on — its canonical bytes, every
 * transfer envelope it names (the exact signed bytes the authority retained) and the executor
 * registrations whose keys verified them — as one receipt bundle v1 (src/contracts/receipt/bundle.ts).
 * Both read the caller's Store (opened read-only) and change nothing. The export verifies the bundle it
 * built with the same pure verifier as `receipt verify` before writing it, and writes it 0644,
 * atomically (temporary file, fsync, link), never over an existing file.
 */
import { chmodSync, linkSync, lstatSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { AgentscmError } from '../../contracts/errors.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { quoteForMessage } from '../../contracts/message-text.js';
import { encodeReceiptBundle, type BundleRegistration, type BundleTransfer } from '../../contracts/receipt/bundle.js';
import {
  decodeReceiptV2,
  receiptTaskKind,
  receiptV2ToJson,
  type ReceiptCollectorEvidence,
  type ReceiptTask,
  type WorkflowReceiptV2,
} from '../../contracts/receipt/receipt-v2.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { getRegistration } from '../../native/executor-registry.js';
import { prefixRange, resolveHexPrefix } from '../../native/prefixes.js';
import { syncDirectory, unlinkQuietly, writePrivateTemporary } from '../../native/private-files.js';
import type { Store } from '../../native/store-handle.js';
import { prepared, readTransaction, type Authority } from '../../native/store.js';
import { journalRead } from '../../workflows/journal.js';
import { readRetainedEnvelope } from '../collector/receipts.js';
import { findTransferOfAttempt } from '../collector/transfers.js';
import { verifyReceiptBundle } from './receipt-bundle-verify.js';

/** A retained receipt as `receipt show` prints it (--json). */
export interface ReceiptShowResult extends JsonObject {
  receipt_digest: string;
  created_at_ms: number;
  receipt: JsonObject;
}

/** What `receipt export` prints (--json). */
export interface ReceiptExportResult extends JsonObject {
  receipt_digest: string;
  out: string;
  /** Bundle length in bytes. */
  length: number;
  /** Plain SHA-256 of the whole bundle file. */
  bundle_sha256: string;
  transfers: number;
  registrations: number;
}

interface StoredReceipt {
  readonly receipt_digest: string;
  readonly receipt: Buffer;
  readonly created_at_ms: number;
}

function resolveReceiptDigest(auth: Authority, reference: string): string {
  return resolveHexPrefix(reference, {
    what: 'receipt',
    notFound: 'RECEIPT_NOT_FOUND',
    listHint: '`agentscm qualification --change ID` prints the receipt digest of a qualified subject',
    candidates: (prefix) => {
      const [low, high] = prefixRange(prefix);
      const row = prepared(
        auth,
        'SELECT count(*) AS n, min(receipt_digest) AS first FROM collector_receipts ' +
          'WHERE receipt_digest >= ? AND receipt_digest < ?',
      ).get(low, high) as {
        n: number;
        first: string | null;
      };
      return { count: row.n, first: row.first };
    },
  });
}

function readStoredReceipt(auth: Authority, reference: string): StoredReceipt {
  const digest = resolveReceiptDigest(auth, reference);
  const row = prepared(
    auth,
    'SELECT receipt_digest, receipt, created_at_ms FROM collector_receipts WHERE receipt_digest = ?',
  ).get(digest) as StoredReceipt | undefined;
  if (row === undefined)
    throw new AgentscmError('RECEIPT_NOT_FOUND', `no retained receipt has digest ${digest}`, {
      hint: '`agentscm qualification --change ID` prints the receipt digest of a qualified subject',
    });
  return row;
}

function decodeStored(stored: StoredReceipt): WorkflowReceiptV2 {
  try {
    return decodeReceiptV2(stored.receipt);
  } catch (error) {
    throw new AgentscmError(
      'TASK_JOURNAL_INCONSISTENT',
      `the retained receipt ${stored.receipt_digest} does not decode`,
      { cause: error },
    );
  }
}

/**
 * Run `fn` on the authority (STORE_NOT_INITIALIZED when absent) inside one snapshot of the
 * journal (WORKFLOW_JOURNAL_NOT_INITIALIZED when absent), both of the caller's Store.
 */
function inSnapshot<T>(store: Store, fn: (auth: Authority) => T): T {
  const auth = store.authority();
  const journal = store.requireJournal();
  return journalRead(journal, () => readTransaction(auth, () => fn(auth)));
}

/**
 * `receipt show`: the retained receipt a digest or unique prefix names (RECEIPT_NOT_FOUND, ID_PREFIX_AMBIGUOUS,
 * ID_INVALID).
 */
export function showReceipt(store: Store, reference: string): ReceiptShowResult {
  return inSnapshot(store, (auth) => {
    const stored = readStoredReceipt(auth, reference);
    return {
      receipt_digest: stored.receipt_digest,
      created_at_ms: stored.created_at_ms,
      receipt: receiptV2ToJson(decodeStored(stored)),
    };
  });
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function bundleExists(out: string): AgentscmError {
  return new AgentscmError(
    'RECEIPT_BUNDLE_EXISTS',
    `${quoteForMessage(out)} already exists; a bundle is never written over another file`,
    { hint: 'name a new file with --out' },
  );
}

/** Create `out` 0644 with `bytes`: fsynced temporary, link (never replaces), directory fsync. */
function writeBundleFile(out: string, bytes: Uint8Array): void {
  const temporary = writePrivateTemporary(out, bytes);
  try {
    chmodSync(temporary, 0o644);
    linkSync(temporary, out);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw bundleExists(out);
    throw new AgentscmError('IO_ERROR', `cannot create ${quoteForMessage(out)}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    unlinkQuietly(temporary);
  }
  syncDirectory(dirname(out));
}

type CollectorRow = ReceiptTask & ReceiptCollectorEvidence;

/**
 * `receipt export`: build the bundle of the receipt `reference` names from what the stores
 * retain (one read snapshot), verify it, and write it to `out` (RECEIPT_BUNDLE_EXISTS when the
 * name is taken; nothing is read before that check).
 */
export function exportReceiptBundle(store: Store, reference: string, outPath: string): ReceiptExportResult {
  const out = resolve(outPath);
  if (exists(out)) throw bundleExists(out);
  const { digest, bundle, transfers, registrations } = buildReceiptBundle(store, reference);
  writeBundleFile(out, bundle);
  return {
    receipt_digest: digest,
    out,
    length: bundle.byteLength,
    bundle_sha256: sha256Hex(bundle),
    transfers,
    registrations,
  };
}

/** A built and verified receipt bundle, in memory. */
export interface BuiltReceiptBundle {
  readonly digest: string;
  readonly bundle: Buffer;
  readonly transfers: number;
  readonly registrations: number;
}

/**
 * The bundle of the receipt `reference` names, built from what the stores retain (one read
 * snapshot) and verified by the offline verifier: `receipt export` writes it to a file, the
 * hub's dashboard route sends it as a download (docs/dashboard.md).
 */
export function buildReceiptBundle(store: Store, reference: string): BuiltReceiptBundle {
  const built = inSnapshot(store, (auth) => {
    const stored = readStoredReceipt(auth, reference);
    const receipt = decodeStored(stored);
    const rows = receipt.tasks.filter((task): task is CollectorRow => receiptTaskKind(task) === 'collector');
    const envelopes: Buffer[] = [];
    const bundleTransfers: BundleTransfer[] = rows.map((row) => {
      const retained = findTransferOfAttempt(auth, row.attempt_id);
      if (retained?.transfer_digest !== row.transfer_digest) {
        throw new AgentscmError(
          'TASK_JOURNAL_INCONSISTENT',
          `receipt ${stored.receipt_digest} names transfer ${row.transfer_digest} of attempt ${row.attempt_id}, ` +
            `which the authority does not retain`,
        );
      }
      // One envelope at a time, its stored length checked against 16 MiB before it is read.
      const envelope = readRetainedEnvelope(auth, retained);
      envelopes.push(envelope);
      return { task_id: row.task_id, transfer_digest: row.transfer_digest, length: BigInt(envelope.byteLength) };
    });
    const bundleRegistrations: BundleRegistration[] = [...new Set(rows.map((row) => row.registration_id))].map((id) => {
      const state = getRegistration(auth, id);
      return {
        registration_id: state.registration_id,
        repository_id: state.repository,
        workflow_profile: state.profile,
        step_id: state.step,
        executor_id: state.executor_id,
        registration_epoch: state.registration_epoch,
        public_key: state.public_key,
        verification_key_id: state.verification_key_id,
      };
    });
    const manifest = {
      version: 1,
      receipt: { receipt_digest: stored.receipt_digest, length: BigInt(stored.receipt.byteLength) },
      transfers: bundleTransfers,
      registrations: bundleRegistrations,
    } as const;
    return {
      digest: stored.receipt_digest,
      bundle: encodeReceiptBundle(manifest, stored.receipt, envelopes),
      transfers: bundleTransfers.length,
      registrations: bundleRegistrations.length,
    };
  });
  // The bundle must pass the offline checks before it leaves the authority.
  verifyReceiptBundle(built.bundle);
  return built;
}
