/**
 * Receipts in tests: a real v2 receipt through the real evidence chain (test/support/evidence.ts:
 * real store, enrolled key from the collector key store, installed profile, live grant, a real
 * collector claim, a signed envelope imported by the authority's import), exported by the export
 * core; and a forger's tools, which rewrite any part of a bundle and then repair every digest
 * outside the part under test (transfer digests in the receipt, the receipt digest and transfer
 * list in the manifest), so that the check under test is the one that must refuse it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { createSigningKey, loadSigningKey } from '../../src/collector/key-store.js';
import { validateCollectorDescriptor } from '../../src/contracts/collector/descriptor.js';
import { decodeCollectorProfile } from '../../src/contracts/collector/profile.js';
import {
  frameTransferEnvelope,
  readTransferEnvelope,
  transferHeaderDigest,
  transferHeaderToJson,
} from '../../src/contracts/collector/transfer.js';
import { domainDigest, DOMAINS } from '../../src/contracts/digest.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import type { SigningKey } from '../../src/contracts/key-file.js';
import { bundleManifestToJson, decodeReceiptBundle, RECEIPT_BUNDLE_MAGIC } from '../../src/contracts/receipt/bundle.js';
import { hexToBytes } from '../../src/contracts/task/common.js';
import { signDigest } from '../../src/crypto/ed25519.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { enrollExecutor } from '../../src/native/executor-registry.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { openAuthority } from '../../src/native/store.js';
import { exportReceiptBundle } from '../../src/tasks/admission/receipt-bundle.js';
import { claimToFile } from '../../src/tasks/collector/claim-file.js';
import { transferRuntimeIdentityDigest } from '../../src/tasks/collector/execution.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { installCollectorProfile } from '../../src/tasks/collector/profiles.js';
import { authorizeTaskToken, type GrantAuthorization } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { importEnvelope } from './admission.js';
import { ALICE, claim, envelopeOf, makeEvidence, RUNTIME_IDENTITY, transferParts, type Evidence } from './evidence.js';
import { makeGrant } from './grants.js';
import { CHANGE_ID, makeTaskStore, PROFILE, RECIPE, sha256, type TaskStore } from './tasks.js';

export interface WideReceipt {
  readonly dataDir: string;
  readonly store: TaskStore;
  readonly key: SigningKey;
  readonly receiptDigest: string;
}

/**
 * A subject of `steps` required command steps (at most 32, the plan limit), each with its own
 * enrollment epoch and collector profile for one key, claimed, collected (a signed passing
 * transfer) and imported as the grant's actor: the last import writes a receipt naming `steps`
 * transfers. The real cores of enroll, profile install, claim and import; for the benchmark too.
 */
export function makeWideReceipt(dir: string, steps: number): WideReceipt {
  const dataDir = join(dir, 'data');
  const ids = Array.from({ length: steps }, (_, i) => `s${String(i).padStart(2, '0')}`);
  const store = makeTaskStore(
    dataDir,
    ids.map((id) => ({ id, kind: 'command' as const })),
  );
  const key = loadSigningKey(createSigningKey(join(dir, 'state')).key_file);
  const grant = makeGrant(dataDir, dir, ALICE);
  const authorizationOf = (): GrantAuthorization =>
    authorizeTaskToken({ store: openStore(dataDir, { mode: 'write' }), token: readTokenFile(grant.token_file) });
  let receiptDigest: string | null = null;
  ids.forEach((step, index) => {
    const auth = openAuthority(dataDir, { mode: 'write' });
    let profileId: string;
    try {
      const enrollment = enrollExecutor(auth, {
        repository: store.repository,
        profile: PROFILE,
        step,
        executor: 'box-1',
        public_key: key.publicKeyHex,
      });
      const profile = decodeCollectorProfile(
        encodeCanonical({
          version: 1,
          kind: 'command',
          repository_id: store.repository,
          workflow_profile: PROFILE,
          step_id: step,
          registration_id: enrollment.registration_id,
          registration_epoch: enrollment.registration_epoch,
          verification_key_id: enrollment.verification_key_id,
          recipe: RECIPE,
          recipe_digest: sha256(JSON.stringify(RECIPE)),
          runtime_identity_digest: transferRuntimeIdentityDigest(RUNTIME_IDENTITY),
        }),
      );
      profileId = installCollectorProfile(auth, profile, Date.now()).collector_profile_id;
    } finally {
      auth.close();
    }
    const out = join(dir, `descriptor-${step}.json`);
    withStore(dataDir, 'write', (held) =>
      claimToFile({
        store: held,
        tokenFile: grant.token_file,
        profileId,
        change: CHANGE_ID,
        context: store.contextDigest,
        leaseMs: 3_600_000n,
        out,
        target: 'main',
      }),
    );
    const descriptor = validateCollectorDescriptor(parse(readFileSync(out)));
    // The evidence fixture's passing collection, for this step's request.
    const parts = transferParts(descriptor);
    parts.request.step_id = step;
    const requestDigest = sha256Hex(encodeCanonical(parts.request));
    parts.record.request_digest = requestDigest;
    const answer = withStore(dataDir, 'write', (held) =>
      importCollectorTransfer(held, envelopeOf(key, parts, { request_digest: requestDigest }), authorizationOf()),
    );
    const receipt = (answer as JsonObject).receipt as JsonObject;
    if (index === steps - 1) {
      assert.equal(receipt.status, 'written', `the last import wrote no receipt: ${JSON.stringify(receipt)}`);
      receiptDigest = receipt.receipt_digest as string;
    } else assert.equal(receipt.status, 'incomplete');
  });
  return { dataDir, store, key, receiptDigest: receiptDigest as unknown as string };
}

export interface ReceiptFixture {
  readonly ev: Evidence;
  readonly receiptDigest: string;
  readonly bundleFile: string;
  readonly bundle: Buffer;
}

/** A store with one v2 receipt (paths: source_paths, unit: imported collector task, cap: optional) and its exported bundle. */
export function makeReceipt(t: TestContext): ReceiptFixture {
  const ev = makeEvidence(t);
  const answer = importEnvelope(ev, envelopeOf(ev.key, transferParts(claim(ev))));
  const receipt = answer.receipt as JsonObject;
  assert.equal(receipt.status, 'written', `the import wrote no receipt: ${JSON.stringify(receipt)}`);
  const receiptDigest = receipt.receipt_digest as string;
  const bundleFile = join(ev.dir, 'receipt.agscmrb');
  withStore(ev.store.dataDir, 'read', (s) => exportReceiptBundle(s, receiptDigest, bundleFile));
  return { ev, receiptDigest, bundleFile, bundle: readFileSync(bundleFile) };
}

function parse(bytes: Uint8Array): JsonObject {
  return parseStrictJson(bytes, { maxBytes: 1 << 20 }) as JsonObject;
}

/** A bundle taken apart as a forger holds it: every part mutable. */
export interface OpenBundle {
  manifest: JsonObject;
  receipt: JsonObject;
  envelopes: Buffer[];
}

export function openBundle(bundle: Uint8Array): OpenBundle {
  const parts = decodeReceiptBundle(bundle);
  return {
    manifest: bundleManifestToJson(parts.manifest),
    receipt: parse(parts.receiptBytes),
    envelopes: parts.envelopes.map((e) => Buffer.from(e)),
  };
}

/** Frame parts as they are (magic, u32be manifest length, manifest, receipt, envelopes). */
export function frameBundle(
  manifestBytes: Uint8Array,
  receiptBytes: Uint8Array,
  envelopes: readonly Uint8Array[],
  magic = RECEIPT_BUNDLE_MAGIC,
): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(manifestBytes.byteLength);
  return Buffer.concat([Buffer.from(magic, 'ascii'), length, manifestBytes, receiptBytes, ...envelopes]);
}

export interface SealOptions {
  /** Set each collector row's transfer_digest to its envelope's SHA-256 (default true). */
  readonly repairTransferDigests?: boolean;
  /** Set the manifest's receipt digest and length and its transfer list from the receipt (default true). */
  readonly repairManifest?: boolean;
  /** With repairManifest, also set the receipt digest (default true); false keeps the digest as exported. */
  readonly repairReceiptDigest?: boolean;
}

function collectorRows(receipt: JsonObject): JsonObject[] {
  return (receipt.tasks as JsonObject[]).filter((row) => row.transfer_digest !== undefined);
}

/** Reassemble an opened bundle, repairing the digests outside the part under test. */
export function sealBundle(open: OpenBundle, options: SealOptions = {}): Buffer {
  const rows = collectorRows(open.receipt);
  if (options.repairTransferDigests ?? true)
    rows.forEach((row, index) => (row.transfer_digest = sha256Hex(open.envelopes[index] ?? Buffer.alloc(0))));
  const receiptBytes = encodeCanonical(open.receipt);
  if (options.repairManifest ?? true) {
    const exported = (open.manifest.receipt as JsonObject).receipt_digest as string;
    open.manifest.receipt = {
      receipt_digest: (options.repairReceiptDigest ?? true) ? domainDigest(DOMAINS.receipt, receiptBytes) : exported,
      length: BigInt(receiptBytes.byteLength),
    };
    open.manifest.transfers = rows.map((row, index) => ({
      task_id: row.task_id as string,
      transfer_digest: row.transfer_digest as string,
      length: BigInt(open.envelopes[index]?.byteLength ?? 0),
    }));
  }
  return frameBundle(encodeCanonical(open.manifest), receiptBytes, open.envelopes);
}

export interface EnvelopeEdit {
  readonly header?: (header: JsonObject) => void;
  readonly request?: (request: JsonObject) => void;
  readonly record?: (record: JsonObject) => void;
  /** Re-sign the header with this 32-byte private key (after recomputing its record entries); otherwise keep the original signature and record entries. */
  readonly signWith?: Uint8Array;
}

/** Rewrite parts of an envelope: the header, the ExecutionRequest, the ExecutionRecord, and optionally re-sign. */
export function editEnvelope(envelope: Uint8Array, edit: EnvelopeEdit): Buffer {
  const read = readTransferEnvelope(envelope);
  const header = transferHeaderToJson(read.header);
  const request = parse((read.records[0] as { bytes: Uint8Array }).bytes);
  const record = parse((read.records[1] as { bytes: Uint8Array }).bytes);
  edit.request?.(request);
  edit.record?.(record);
  const requestBytes = encodeCanonical(request);
  const recordBytes = encodeCanonical(record);
  if (edit.signWith !== undefined) {
    header.records = [
      { kind: 'execution_request', length: BigInt(requestBytes.byteLength), digest: sha256Hex(requestBytes) },
      { kind: 'execution_record', length: BigInt(recordBytes.byteLength), digest: sha256Hex(recordBytes) },
    ];
    header.request_digest = sha256Hex(requestBytes);
  }
  edit.header?.(header);
  const headerBytes = encodeCanonical(header);
  const signature =
    edit.signWith === undefined
      ? read.signature
      : signDigest(hexToBytes(transferHeaderDigest(headerBytes)), edit.signWith);
  return frameTransferEnvelope(headerBytes, signature, [requestBytes, recordBytes]);
}

/** Another value of the same kind: hex keeps its length and alphabet, ids stay ids, integers grow by one, booleans flip. */
export function changed(value: JsonValue | undefined): JsonValue {
  if (typeof value === 'bigint') return value + 1n;
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'string') {
    if (/^[0-9a-f]+$/.test(value)) return `${value.slice(0, -1)}${value.endsWith('0') ? '1' : '0'}`;
    return `${value}x`;
  }
  throw new Error(`no changed value for ${JSON.stringify(value)}`);
}

/** Every leaf of an object as [path, parent, key]; arrays of objects are walked too. */
export function leaves(object: JsonObject, prefix = ''): { path: string; parent: JsonObject; key: string }[] {
  const out: { path: string; parent: JsonObject; key: string }[] = [];
  for (const key of Object.keys(object)) {
    const value = object[key];
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) out.push(...leaves(value, path));
    else if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (item !== null && typeof item === 'object' && !Array.isArray(item))
          out.push(...leaves(item, `${path}.${index}`));
        else out.push({ path: `${path}.${index}`, parent: value as unknown as JsonObject, key: String(index) });
      });
    } else out.push({ path, parent: object, key });
  }
  return out;
}

/** The leaf at a dotted path of a parsed copy of `object`, to change it in place. */
export function leafAt(object: JsonObject, path: string): { parent: JsonObject; key: string } {
  const found = leaves(object).find((leaf) => leaf.path === path);
  if (found === undefined) throw new Error(`no leaf ${path}`);
  return found;
}
