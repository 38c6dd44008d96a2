/**
 * The offline verifier against bundles changed at every field (docs/receipts.md "What verify
 * checks"): a real receipt from the real import, exported, then each part rewritten by a forger
 * who repairs every digest outside the part under test, so that the check named is the one that
 * refuses. Fields the signed evidence does not carry are bound by the receipt digest alone: a
 * forger who changes one gets a bundle that verifies under another receipt digest, never the
 * exported one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { AgentscmError, ERROR_CODES } from '../../src/contracts/errors.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { generateKeyPair, verificationKeyId } from '../../src/crypto/ed25519.js';
import {
  BUNDLE_CHECKS,
  verifyReceiptBundle,
  type VerifyBundleOptions,
} from '../../src/tasks/admission/receipt-bundle-verify.js';
import { exportReceiptBundle } from '../../src/tasks/admission/receipt-bundle.js';
import { withStore } from '../../src/tasks/store.js';
import { tempDir } from '../helpers/tmp.js';
import {
  changed,
  editEnvelope,
  leafAt,
  leaves,
  makeReceipt,
  makeWideReceipt,
  openBundle,
  sealBundle,
  type OpenBundle,
} from '../support/receipts.js';

function codeOf(bytes: Uint8Array, options: VerifyBundleOptions = {}): string {
  try {
    verifyReceiptBundle(bytes, options);
    return 'VERIFIED';
  } catch (error) {
    if (!(error instanceof AgentscmError)) throw error;
    return error.code;
  }
}

function digestOf(bytes: Uint8Array, options: VerifyBundleOptions = {}): string {
  return verifyReceiptBundle(bytes, options).receipt_digest;
}

function unitRow(open: OpenBundle): JsonObject {
  return (open.receipt.tasks as JsonObject[]).find((row) => row.step_id === 'unit') as JsonObject;
}

test('an exported bundle verifies: every check ran, the unit row is signed, the source_paths and optional rows are listed as unsigned', (t) => {
  const { bundle, receiptDigest, ev } = makeReceipt(t);
  const result = verifyReceiptBundle(bundle, { publicKeys: [ev.key.publicKeyHex] });
  assert.equal(result.receipt_digest, receiptDigest);
  assert.deepEqual(result.checks, [...BUNDLE_CHECKS]);
  assert.deepEqual(
    result.transfers.map((row) => [row.step_id, row.record_outcome, row.verification_key_id]),
    [['unit', 'passed', ev.enrollment.verification_key_id]],
  );
  assert.deepEqual(
    result.unsigned_rows.map((row) => [row.step_id, row.evidence]),
    [
      ['paths', 'result_digest'],
      ['cap', 'none'],
    ],
  );
  assert.equal(result.public_keys_pinned, true);
});

test('every byte of the bundle, flipped, is refused; inside an envelope by its transfer digest, inside the receipt by its decoding or digest', (t) => {
  const { bundle } = makeReceipt(t);
  const open = openBundle(bundle);
  const manifestEnd = 12 + bundle.readUInt32BE(8);
  const receiptEnd = manifestEnd + Number((open.manifest.receipt as JsonObject).length);
  const refused = new Map<string, number>();
  for (let i = 0; i < bundle.byteLength; i++) {
    const copy = Buffer.from(bundle);
    copy[i] = (copy[i] as number) ^ 0x01;
    const code = codeOf(copy);
    assert.ok(code.startsWith('RECEIPT_BUNDLE_'), `byte ${i}: ${code}`);
    refused.set(code, (refused.get(code) ?? 0) + 1);
    if (i >= receiptEnd) assert.equal(code, 'RECEIPT_BUNDLE_TRANSFER_DIGEST_MISMATCH', `envelope byte ${i}`);
    else if (i >= manifestEnd)
      assert.ok(
        ['RECEIPT_BUNDLE_RECEIPT_INVALID', 'RECEIPT_BUNDLE_RECEIPT_DIGEST_MISMATCH'].includes(code),
        `receipt byte ${i}: ${code}`,
      );
  }
  assert.ok(
    refused.has('RECEIPT_BUNDLE_MAGIC_INVALID') && refused.has('RECEIPT_BUNDLE_MANIFEST_INVALID'),
    JSON.stringify([...refused]),
  );
});

// Receipt fields and the check that refuses each once the forger repairs the manifest.
const RECEIPT_FIELD_CHECKS: Record<string, string> = {
  version: 'RECEIPT_BUNDLE_RECEIPT_INVALID',
  authority_id: 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  repository_id: 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
  workflow_profile: 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
  'subject.change_id': 'RECEIPT_BUNDLE_REQUEST_MISMATCH',
  'subject.change_version': 'RECEIPT_BUNDLE_REQUEST_MISMATCH',
  'subject.revision': 'RECEIPT_BUNDLE_REQUEST_MISMATCH',
  'subject.context_digest': 'RECEIPT_BUNDLE_REQUEST_MISMATCH',
  'subject.policy_epoch': 'RECEIPT_BUNDLE_REQUEST_MISMATCH',
  state: 'RECEIPT_BUNDLE_RECEIPT_INVALID',
  // The collector row (tasks.1).
  'tasks.1.task_id': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.task_digest': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.step_id': 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
  'tasks.1.outcome': 'RECEIPT_BUNDLE_RECEIPT_INVALID',
  'tasks.1.attempt_id': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.attempt_digest': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.fence': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.transfer_digest': 'RECEIPT_BUNDLE_TRANSFER_DIGEST_MISMATCH',
  'tasks.1.collector_profile_id': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.registration_id': 'RECEIPT_BUNDLE_REGISTRATION_SET_MISMATCH',
  'tasks.1.registration_epoch': 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
  'tasks.1.verification_key_id': 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
  'tasks.1.origin.owner_id': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.origin.agent_id': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.origin.grant_id': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
  'tasks.1.origin.grant_generation': 'RECEIPT_BUNDLE_HEADER_MISMATCH',
};

test('every receipt field changed: refused by its receipt digest as exported, and with the digest repaired by the check named for it or, for a field no signature carries, verified only under another receipt digest', (t) => {
  const { bundle, receiptDigest } = makeReceipt(t);
  const fields = leaves(openBundle(bundle).receipt).map((leaf) => leaf.path);
  assert.ok(fields.includes('tasks.1.transfer_digest') && fields.includes('subject.plan_digest'), fields.join(' '));
  const unsignedOnly: string[] = [];
  for (const field of fields) {
    const open = openBundle(bundle);
    const leaf = leafAt(open.receipt, field);
    leaf.parent[leaf.key] = changed(leaf.parent[leaf.key]);
    const asExported = codeOf(sealBundle(open, { repairTransferDigests: false, repairReceiptDigest: false }));
    assert.ok(
      ['RECEIPT_BUNDLE_RECEIPT_DIGEST_MISMATCH', 'RECEIPT_BUNDLE_RECEIPT_INVALID'].includes(asExported),
      `${field} with the manifest as exported: ${asExported}`,
    );
    const forged = sealBundle(open, { repairTransferDigests: false });
    const expected = RECEIPT_FIELD_CHECKS[field];
    if (expected !== undefined) {
      assert.equal(codeOf(forged), expected, field);
    } else {
      const code = codeOf(forged);
      // A field that also breaks a receipt rule is refused by the receipt's own decoding.
      if (code !== 'VERIFIED') assert.equal(code, 'RECEIPT_BUNDLE_RECEIPT_INVALID', field);
      else assert.notEqual(digestOf(forged), receiptDigest, `${field} verifies only under another receipt digest`);
      unsignedOnly.push(field);
    }
  }
  // What the signed evidence does not carry (documented in docs/receipts.md).
  assert.deepEqual(
    unsignedOnly.filter((f) => !f.startsWith('tasks.0.') && !f.startsWith('tasks.2.')),
    ['subject.target', 'subject.requirement_digest', 'subject.plan_digest', 'tasks.1.required'],
  );
});

test('every signed header field changed without re-signing is RECEIPT_BUNDLE_SIGNATURE_INVALID; re-signed with the enrolled key, each field the receipt names is RECEIPT_BUNDLE_HEADER_MISMATCH naming it', (t) => {
  const { bundle, ev } = makeReceipt(t);
  const header = (open: OpenBundle): JsonObject => {
    let seen: JsonObject = {};
    editEnvelope(open.envelopes[0] as Buffer, { header: (h) => (seen = h) });
    return seen;
  };
  const fields = leaves(header(openBundle(bundle))).map((leaf) => leaf.path);
  assert.ok(fields.includes('records.1.digest') && fields.includes('collector.agentscm_version'), fields.join(' '));
  const bound: Record<string, string> = {
    audience: 'header.audience',
    repository_id: 'header.repository_id',
    collector_profile_id: 'header.collector_profile_id',
    task_id: 'header.task_id',
    task_digest: 'header.task_digest',
    attempt_id: 'header.attempt_id',
    attempt_digest: 'header.attempt_digest',
    fence: 'header.fence',
    'origin.owner_id': 'header.origin.owner_id',
    'origin.agent_id': 'header.origin.agent_id',
    'origin.grant_id': 'header.origin.grant_id',
    'origin.grant_generation': 'header.origin.grant_generation',
    'executor.registration_id': 'header.executor.registration_id',
    'executor.executor_id': 'header.executor.executor_id',
    'executor.registration_epoch': 'header.executor.registration_epoch',
  };
  for (const field of fields) {
    const change = (h: JsonObject): void => {
      const leaf = leafAt(h, field);
      leaf.parent[leaf.key] = field.endsWith('.kind') ? 'review_request' : changed(leaf.parent[leaf.key]);
    };
    const unsigned = openBundle(bundle);
    unsigned.envelopes[0] = editEnvelope(unsigned.envelopes[0] as Buffer, { header: change });
    const unsignedCode = codeOf(sealBundle(unsigned));
    // A header that no longer decodes (another version, a record kind out of order) or frames its records (a record length) is refused by the framing check first.
    const framing = field === 'version' || field.endsWith('.kind') || field.endsWith('.length');
    assert.equal(
      unsignedCode,
      framing ? 'RECEIPT_BUNDLE_TRANSFER_INVALID' : 'RECEIPT_BUNDLE_SIGNATURE_INVALID',
      `${field} unsigned`,
    );
    if (field === 'executor.verification_key_id') continue; // no signature under a key the forger does not hold
    const resigned = openBundle(bundle);
    resigned.envelopes[0] = editEnvelope(resigned.envelopes[0] as Buffer, {
      header: change,
      signWith: ev.key.privateKey,
    });
    let error: AgentscmError | null = null;
    try {
      verifyReceiptBundle(sealBundle(resigned));
    } catch (caught) {
      error = caught as AgentscmError;
    }
    const target = bound[field];
    if (field === 'version') {
      assert.equal(error?.code, 'RECEIPT_BUNDLE_TRANSFER_INVALID', field);
    } else if (target !== undefined) {
      assert.equal(error?.code, 'RECEIPT_BUNDLE_HEADER_MISMATCH', field);
      assert.equal(error.details?.field, target);
    } else if (field === 'request_digest' || field === 'collector.runtime_identity_digest') {
      assert.equal(error?.code, 'RECEIPT_BUNDLE_REQUEST_MISMATCH', field);
    } else if (field.startsWith('records.')) {
      assert.ok(
        ['RECEIPT_BUNDLE_RECORD_DIGEST_MISMATCH', 'RECEIPT_BUNDLE_TRANSFER_INVALID'].includes(error?.code ?? ''),
        `${field}: ${error?.code ?? 'verified'}`,
      );
    } else {
      // execution_operation_id, upload_request_id, collector.agentscm_version: what the executor's key attests, not the receipt.
      assert.equal(error, null, `${field}: ${error?.message ?? ''}`);
    }
  }
});

test('every field of both records changed without re-signing is RECEIPT_BUNDLE_RECORD_DIGEST_MISMATCH; re-signed, the request fields the receipt binds and the record checks refuse', (t) => {
  const { bundle, ev } = makeReceipt(t);
  let request: JsonObject = {};
  let record: JsonObject = {};
  editEnvelope(openBundle(bundle).envelopes[0] as Buffer, {
    request: (r) => (request = r),
    record: (r) => (record = r),
  });
  const requestBound = [
    'version',
    'kind',
    'attempt_id',
    'generation',
    'run_id',
    'step_id',
    'repository',
    'revision',
    'policy_epoch',
    'change.repository',
    'change.id',
    'change_version',
    'context_digest',
    'runtime_identity_digest',
  ];
  for (const [which, fields] of [
    ['request', leaves(request).map((l) => l.path)],
    ['record', leaves(record).map((l) => l.path)],
  ] as const) {
    for (const field of fields) {
      const edit = (r: JsonObject): void => {
        const leaf = leafAt(r, field);
        leaf.parent[leaf.key] = changed(leaf.parent[leaf.key] ?? 'x');
      };
      const unsigned = openBundle(bundle);
      const original = unsigned.envelopes[0] as Buffer;
      unsigned.envelopes[0] = editEnvelope(original, which === 'request' ? { request: edit } : { record: edit });
      // Same length: the framing holds and the record digest refuses; another length breaks the framing the signed header declares.
      const expected =
        unsigned.envelopes[0].byteLength === original.byteLength
          ? 'RECEIPT_BUNDLE_RECORD_DIGEST_MISMATCH'
          : 'RECEIPT_BUNDLE_TRANSFER_INVALID';
      assert.equal(codeOf(sealBundle(unsigned)), expected, `${which}.${field} unsigned`);
      const resigned = openBundle(bundle);
      resigned.envelopes[0] = editEnvelope(resigned.envelopes[0] as Buffer, {
        ...(which === 'request' ? { request: edit } : { record: edit }),
        signWith: ev.key.privateKey,
      });
      const code = codeOf(sealBundle(resigned));
      if (which === 'request' && (requestBound.includes(field) || field.startsWith('runtime_identity.')))
        assert.equal(code, 'RECEIPT_BUNDLE_REQUEST_MISMATCH', `request.${field}`);
      else if (which === 'request' && field.startsWith('recipe.'))
        assert.ok(
          ['RECEIPT_BUNDLE_REQUEST_MISMATCH', 'RECEIPT_BUNDLE_RECORD_INVALID', 'VERIFIED'].includes(code),
          `request.${field}: ${code}`,
        );
      else
        assert.ok(
          ['RECEIPT_BUNDLE_RECORD_INVALID', 'VERIFIED', 'RECEIPT_BUNDLE_REQUEST_MISMATCH'].includes(code),
          `${which}.${field}: ${code}`,
        );
    }
  }
  // The record's own checks, re-signed by the enrolled key: the record names another attempt, claims network, or did not clean up.
  for (const [what, edit] of [
    ['attempt', (r: JsonObject) => (r.attempt_id = 'other-attempt')],
    ['network', (r: JsonObject) => ((r.isolation as JsonObject).network = 'bridge')],
    ['cleanup', (r: JsonObject) => ((r.cleanup as JsonObject).confirmed = false)],
  ] as const) {
    const open = openBundle(bundle);
    open.envelopes[0] = editEnvelope(open.envelopes[0] as Buffer, { record: edit, signWith: ev.key.privateKey });
    assert.equal(codeOf(sealBundle(open)), 'RECEIPT_BUNDLE_RECORD_INVALID', what);
  }
});

test('a signed record that failed is RECEIPT_BUNDLE_OUTCOME_MISMATCH: the receipt row says passed', (t) => {
  const { bundle, ev } = makeReceipt(t);
  const open = openBundle(bundle);
  open.envelopes[0] = editEnvelope(open.envelopes[0] as Buffer, {
    record: (r) => {
      r.outcome = 'failed';
      r.exit_code = 1;
    },
    signWith: ev.key.privateKey,
  });
  assert.equal(codeOf(sealBundle(open)), 'RECEIPT_BUNDLE_OUTCOME_MISMATCH');
});

test('the signature changed at any byte is RECEIPT_BUNDLE_SIGNATURE_INVALID', (t) => {
  const { bundle } = makeReceipt(t);
  const envelope = openBundle(bundle).envelopes[0] as Buffer;
  const signatureStart = 12 + envelope.readUInt32BE(8);
  for (let i = signatureStart; i < signatureStart + 64; i++) {
    const open = openBundle(bundle);
    const copy = Buffer.from(envelope);
    copy[i] = (copy[i] as number) ^ 0x80;
    open.envelopes[0] = copy;
    assert.equal(codeOf(sealBundle(open)), 'RECEIPT_BUNDLE_SIGNATURE_INVALID', `signature byte ${i - signatureStart}`);
  }
});

test('every registration field changed is refused by the registration checks, and the public key by its key id', (t) => {
  const { bundle } = makeReceipt(t);
  const expected: Record<string, string> = {
    registration_id: 'RECEIPT_BUNDLE_REGISTRATION_SET_MISMATCH',
    repository_id: 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
    workflow_profile: 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
    step_id: 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
    executor_id: 'RECEIPT_BUNDLE_HEADER_MISMATCH',
    registration_epoch: 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH',
    public_key: 'RECEIPT_BUNDLE_REGISTRATION_KEY_MISMATCH',
    verification_key_id: 'RECEIPT_BUNDLE_REGISTRATION_KEY_MISMATCH',
  };
  const registration = (open: OpenBundle): JsonObject => (open.manifest.registrations as JsonObject[])[0] as JsonObject;
  assert.deepEqual(Object.keys(registration(openBundle(bundle))), Object.keys(expected));
  for (const field of Object.keys(expected)) {
    const open = openBundle(bundle);
    registration(open)[field] = changed(registration(open)[field]);
    assert.equal(codeOf(sealBundle(open)), expected[field], field);
  }
  // Another valid key with its own key id: the receipt row names the enrolled key's id.
  const other = generateKeyPair();
  const open = openBundle(bundle);
  registration(open).public_key = Buffer.from(other.publicKey).toString('hex');
  registration(open).verification_key_id = verificationKeyId(other.publicKey);
  assert.equal(codeOf(sealBundle(open)), 'RECEIPT_BUNDLE_REGISTRATION_MISMATCH');
});

test('a forgery re-keyed throughout (its own key, registration, header and receipt row) verifies only without pinning, under another receipt digest; --public-key of the enrolled key refuses it with RECEIPT_BUNDLE_KEY_NOT_PINNED', (t) => {
  const { bundle, receiptDigest, ev } = makeReceipt(t);
  const forger = generateKeyPair();
  const keyId = verificationKeyId(forger.publicKey);
  const open = openBundle(bundle);
  const registration = (open.manifest.registrations as JsonObject[])[0] as JsonObject;
  registration.public_key = Buffer.from(forger.publicKey).toString('hex');
  registration.verification_key_id = keyId;
  unitRow(open).verification_key_id = keyId;
  open.envelopes[0] = editEnvelope(open.envelopes[0] as Buffer, {
    header: (h) => ((h.executor as JsonObject).verification_key_id = keyId),
    signWith: forger.privateKey,
  });
  const forged = sealBundle(open);
  assert.notEqual(digestOf(forged), receiptDigest);
  assert.equal(codeOf(forged, { publicKeys: [ev.key.publicKeyHex] }), 'RECEIPT_BUNDLE_KEY_NOT_PINNED');
  assert.equal(
    codeOf(bundle, { publicKeys: [Buffer.from(forger.publicKey).toString('hex')] }),
    'RECEIPT_BUNDLE_KEY_NOT_PINNED',
  );
  assert.equal(
    digestOf(bundle, { publicKeys: [Buffer.from(forger.publicKey).toString('hex'), ev.key.publicKeyHex] }),
    receiptDigest,
  );
});

test('the transfer and registration lists must be exactly what the receipt names', (t) => {
  const { bundle } = makeReceipt(t);
  let open = openBundle(bundle);
  open.envelopes.push(Buffer.from(open.envelopes[0] as Buffer));
  const extra = sealBundle(open, { repairManifest: false });
  assert.equal(codeOf(extra), 'RECEIPT_BUNDLE_TRAILING_BYTES');
  open = openBundle(bundle);
  (open.manifest.transfers as JsonObject[]).push({ ...((open.manifest.transfers as JsonObject[])[0] as JsonObject) });
  open.envelopes.push(Buffer.from(open.envelopes[0] as Buffer));
  assert.equal(codeOf(sealBundle(open, { repairManifest: false })), 'RECEIPT_BUNDLE_TRANSFER_SET_MISMATCH');
  open = openBundle(bundle);
  (open.manifest.registrations as JsonObject[]).push({
    ...((open.manifest.registrations as JsonObject[])[0] as JsonObject),
    registration_id: 'reg-extra',
  });
  assert.equal(codeOf(sealBundle(open)), 'RECEIPT_BUNDLE_REGISTRATION_SET_MISMATCH');
});

test('every verification code is exit 1 and every frame or manifest code exit 2 (docs/errors.md "receipt bundles")', () => {
  const frame = [
    'RECEIPT_BUNDLE_TOO_LARGE',
    'RECEIPT_BUNDLE_MAGIC_INVALID',
    'RECEIPT_BUNDLE_TRUNCATED',
    'RECEIPT_BUNDLE_TRAILING_BYTES',
    'RECEIPT_BUNDLE_MANIFEST_INVALID',
    'RECEIPT_BUNDLE_VERSION_UNSUPPORTED',
  ] as const;
  for (const [code, info] of Object.entries(ERROR_CODES)) {
    if (!code.startsWith('RECEIPT_BUNDLE_') || code === 'RECEIPT_BUNDLE_EXISTS') continue;
    assert.equal(info.exit, (frame as readonly string[]).includes(code) ? 2 : 1, code);
  }
});

test('a receipt of 32 imported command tasks (the plan limit) exports one bundle of 32 transfers and 32 registrations that verifies', (t) => {
  const dir = tempDir(t);
  const wide = makeWideReceipt(dir, 32);
  const out = join(dir, 'wide.agscmrb');
  const exported = withStore(wide.dataDir, 'read', (s) => exportReceiptBundle(s, wide.receiptDigest, out));
  assert.deepEqual([exported.transfers, exported.registrations], [32, 32]);
  const result = verifyReceiptBundle(readFileSync(out), { publicKeys: [wide.key.publicKeyHex] });
  assert.equal(result.receipt_digest, wide.receiptDigest);
  assert.equal(result.transfers.length, 32);
  assert.ok(result.transfers.every((row) => row.record_outcome === 'passed' && row.required));
});
