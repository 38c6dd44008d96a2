/**
 * importCollectorTransfer (docs/collector-transfer.md "Import"): real stores, a real enrolled key
 * from the collector key store, real collector claims, envelopes built with the transfer
 * encoder. Every header binding tampered and re-signed with the enrolled key is refused with its
 * own code and changes nothing; tampered without re-signing it is a signature refusal.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { createSigningKey, loadSigningKey } from '../../src/collector/key-store.js';
import {
  encodeTransferHeader,
  frameTransferEnvelope,
  readTransferEnvelope,
  type TransferHeader,
} from '../../src/contracts/collector/transfer.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { decodeReceiptV2 } from '../../src/contracts/receipt/receipt-v2.js';
import { revokeGrant, rotateGrant } from '../../src/native/grants.js';
import { openAuthority } from '../../src/native/store.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { codeOf } from '../helpers/errors.js';
import {
  authorization,
  claim,
  enrollAndInstall,
  envelopeOf,
  makeEvidence,
  transferParts,
  type Evidence,
} from '../support/evidence.js';
import { checkpoint, revoke, sha256 } from '../support/tasks.js';

function importAs(ev: Evidence, envelope: Uint8Array, tokenFile = ev.tokenFile): JsonObject {
  return withStore(ev.store.dataDir, 'write', (held) =>
    importCollectorTransfer(held, envelope, authorization(ev, tokenFile)),
  );
}

function transferCount(ev: Evidence): number {
  const journal = openAuthority(ev.store.dataDir, { mode: 'read' });
  try {
    return (journal.db.prepare('SELECT count(*) AS n FROM collector_transfers').get() as { n: number }).n;
  } finally {
    journal.close();
  }
}

function receipts(ev: Evidence): Buffer[] {
  const journal = openAuthority(ev.store.dataDir, { mode: 'read' });
  try {
    return (journal.db.prepare('SELECT receipt FROM collector_receipts').all() as { receipt: Buffer }[]).map(
      (r) => r.receipt,
    );
  } finally {
    journal.close();
  }
}

function withWrite<T>(ev: Evidence, fn: (auth: ReturnType<typeof openAuthority>) => T): T {
  const auth = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    return fn(auth);
  } finally {
    auth.close();
  }
}

test('a valid transfer imports, finishes the attempt and writes the v2 receipt naming transfer, attempt, fence, registration, profile and origin; the exact retry answers the retained view; changed bytes conflict', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const parts = transferParts(descriptor);
  const envelope = envelopeOf(ev.key, parts);
  const answer = importAs(ev, envelope);
  assert.equal(answer.status, 'imported');
  assert.equal(answer.outcome, 'passed');
  assert.equal((answer.receipt as JsonObject).status, 'written');
  const [stored] = receipts(ev);
  assert.ok(stored !== undefined);
  const receipt = decodeReceiptV2(stored);
  assert.equal(receipt.state, 'completed_with_omissions');
  const unit = receipt.tasks.find((row) => row.step_id === 'unit') as unknown as JsonObject;
  assert.equal(unit.transfer_digest, answer.transfer_digest);
  assert.equal(unit.attempt_id, descriptor.attempt.attempt_id);
  assert.equal(unit.fence, 1n);
  assert.equal(unit.collector_profile_id, ev.profileId);
  assert.equal(unit.registration_id, ev.enrollment.registration_id);
  assert.deepEqual(unit.origin, { owner_id: 'alice', agent_id: 'agent-1', grant_id: ev.grantId, grant_generation: 1n });
  const paths = receipt.tasks.find((row) => row.step_id === 'paths') as unknown as JsonObject;
  assert.match(paths.result_digest as string, /^[0-9a-f]{64}$/);

  const retry = importAs(ev, envelope);
  assert.equal(retry.status, 'retained');
  assert.equal(retry.transfer_digest, answer.transfer_digest);
  assert.equal(retry.currently_applicable, true);
  // The retained view survives drift: after revocation the retry still answers, not applicable.
  const changed = envelopeOf(ev.key, { ...parts, record: { ...parts.record, duration_ms: 1001 } });
  assert.equal(
    codeOf(() => importAs(ev, changed)),
    'IMPORT_UPLOAD_CONFLICT',
  );
  revoke(ev.store, ev.enrollment.registration_id);
  const late = importAs(ev, envelope);
  assert.equal(late.status, 'retained');
  assert.equal(late.currently_applicable, false);
  assert.equal(late.transfer_digest, answer.transfer_digest);
});

test('each header binding tampered and re-signed with the enrolled key is refused with its own code; unsigned tampering is a signature refusal; nothing is imported', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const parts = transferParts(descriptor);
  const h = parts.header;
  const cases: [string, Partial<TransferHeader>, string][] = [
    ['audience', { audience: 'f'.repeat(32) }, 'IMPORT_AUDIENCE_MISMATCH'],
    ['repository_id', { repository_id: 'e'.repeat(32) }, 'IMPORT_REPOSITORY_MISMATCH'],
    ['collector_profile_id', { collector_profile_id: 'a'.repeat(64) }, 'IMPORT_PROFILE_MISMATCH'],
    ['task_id', { task_id: 't-other' }, 'IMPORT_TASK_MISMATCH'],
    ['task_digest', { task_digest: 'a'.repeat(64) }, 'IMPORT_TASK_MISMATCH'],
    ['attempt_id', { attempt_id: 'a-other' }, 'IMPORT_ATTEMPT_MISMATCH'],
    ['attempt_digest', { attempt_digest: 'a'.repeat(64) }, 'IMPORT_ATTEMPT_MISMATCH'],
    ['execution_operation_id', { execution_operation_id: 'x-other' }, 'IMPORT_EXECUTION_MISMATCH'],
    ['fence', { fence: h.fence + 1n }, 'IMPORT_FENCE_STALE'],
    ['origin', { origin: { ...h.origin, grant_generation: 2n } }, 'IMPORT_ORIGIN_MISMATCH'],
    ['executor', { executor: { ...h.executor, executor_id: 'box-9' } }, 'IMPORT_EXECUTOR_MISMATCH'],
    ['request_digest', { request_digest: 'a'.repeat(64) }, 'IMPORT_REQUEST_MISMATCH'],
    [
      'collector',
      { collector: { ...h.collector, runtime_identity_digest: 'a'.repeat(64) } },
      'IMPORT_RUNTIME_MISMATCH',
    ],
    ['upload_request_id', { upload_request_id: 'u-other' }, 'IMPORT_UPLOAD_UNKNOWN'],
  ];
  const signed = envelopeOf(ev.key, parts);
  const original = readTransferEnvelope(signed);
  for (const [field, override, code] of cases) {
    // Re-signed with the enrolled key: the binding check refuses it.
    assert.equal(
      codeOf(() => importAs(ev, envelopeOf(ev.key, parts, override))),
      code,
      `re-signed ${field}`,
    );
    // The same change under the original signature: the signature no longer covers the header.
    const unsigned = frameTransferEnvelope(
      encodeTransferHeader({ ...original.header, ...override }),
      original.signature,
      original.records.map((r) => r.bytes),
    );
    assert.equal(
      codeOf(() => importAs(ev, unsigned)),
      'TRANSFER_SIGNATURE_INVALID',
      `unsigned ${field}`,
    );
  }
  assert.equal(transferCount(ev), 0);
  // One header byte changed in place (same length) fails the signature.
  const at = signed.indexOf(Buffer.from(descriptor.attempt.execution_operation_id));
  const flipped = Buffer.from(signed);
  flipped[at + 2] = flipped[at + 2] === 0x61 ? 0x62 : 0x61;
  assert.equal(
    codeOf(() => importAs(ev, flipped)),
    'TRANSFER_SIGNATURE_INVALID',
  );
  // Truncated and extended envelopes.
  assert.equal(
    codeOf(() => importAs(ev, signed.subarray(0, signed.length - 1))),
    'TRANSFER_TRUNCATED',
  );
  assert.equal(
    codeOf(() => importAs(ev, Buffer.concat([signed, Buffer.from([0])]))),
    'TRANSFER_TRAILING_BYTES',
  );
  assert.equal(
    codeOf(() => importAs(ev, Buffer.alloc(16 * 1024 * 1024 + 1))),
    'TRANSFER_TOO_LARGE',
  );
  assert.equal(transferCount(ev), 0);
  // The untampered envelope still imports.
  assert.equal(importAs(ev, signed).status, 'imported');
});

test('records: a record claiming network, unconfirmed cleanup, another image, a passed outcome with a failing exit, or another recipe are refused', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const parts = transferParts(descriptor);
  const isolation = parts.record.isolation as JsonObject;
  const recordCases: [string, JsonObject, string][] = [
    ['network', { ...parts.record, isolation: { ...isolation, network: 'bridge' } }, 'IMPORT_ISOLATION_VIOLATED'],
    [
      'capabilities',
      { ...parts.record, isolation: { ...isolation, capabilities: ['NET_ADMIN'] } },
      'IMPORT_ISOLATION_VIOLATED',
    ],
    [
      'cleanup',
      { ...parts.record, cleanup: { container: 'unconfirmed', snapshot: 'removed', confirmed: false } },
      'IMPORT_CLEANUP_UNCONFIRMED',
    ],
    ['image', { ...parts.record, image_id: `sha256:${'0'.repeat(64)}` }, 'IMPORT_RUNTIME_MISMATCH'],
    ['exit', { ...parts.record, exit_code: 1 }, 'IMPORT_RECORD_INVALID'],
    [
      'output',
      {
        ...parts.record,
        stdout: { retained_bytes: 70_000, observed_bytes: 70_000, truncated: false, sha256: 'a'.repeat(64) },
      },
      'IMPORT_RECORD_INVALID',
    ],
    [
      'output together',
      {
        ...parts.record,
        stdout: { retained_bytes: 40_000, observed_bytes: 40_000, truncated: false, sha256: 'a'.repeat(64) },
        stderr: { retained_bytes: 40_000, observed_bytes: 40_000, truncated: false, sha256: 'b'.repeat(64) },
      },
      'IMPORT_RECORD_INVALID',
    ],
    [
      'retained beyond observed',
      { ...parts.record, stdout: { retained_bytes: 3, observed_bytes: 2, truncated: false, sha256: 'a'.repeat(64) } },
      'IMPORT_RECORD_INVALID',
    ],
  ];
  for (const [name, record, code] of recordCases) {
    assert.equal(
      codeOf(() => importAs(ev, envelopeOf(ev.key, { ...parts, record }))),
      code,
      name,
    );
  }
  const recipe = parts.request.recipe as JsonObject;
  const request = { ...parts.request, recipe: { ...recipe, argv: ['sh', '-c', 'true'] } };
  const record = { ...parts.record, request_digest: '' };
  const requestBytes = encodeCanonical(request);
  record.request_digest = sha256(requestBytes);
  assert.equal(
    codeOf(() =>
      importAs(
        ev,
        envelopeOf(
          ev.key,
          { request, record, header: parts.header },
          { request_digest: String(record.request_digest) },
        ),
      ),
    ),
    'IMPORT_REQUEST_MISMATCH',
  );
  const identity = { ...(parts.request.runtime_identity as JsonObject), engine_version: '99' };
  const otherRuntime = { ...parts.request, runtime_identity: identity };
  const otherDigest = sha256(encodeCanonical(otherRuntime));
  const otherRecord = { ...parts.record, request_digest: otherDigest };
  assert.equal(
    codeOf(() =>
      importAs(
        ev,
        envelopeOf(
          ev.key,
          { request: otherRuntime, record: otherRecord, header: parts.header },
          { request_digest: otherDigest },
        ),
      ),
    ),
    'IMPORT_RUNTIME_MISMATCH',
  );
  assert.equal(transferCount(ev), 0);
});

test('between claim and upload: executor revoked, re-enrolled (new epoch), grant revoked or rotated, or the attempt reconciled (old fence) — each refused, nothing imported', (t) => {
  const revoked = makeEvidence(t);
  const d1 = claim(revoked);
  revoke(revoked.store, revoked.enrollment.registration_id);
  assert.equal(
    codeOf(() => importAs(revoked, envelopeOf(revoked.key, transferParts(d1)))),
    'IMPORT_REGISTRATION_NOT_CURRENT',
  );

  const reenrolled = makeEvidence(t);
  const d2 = claim(reenrolled);
  const newKey = loadSigningKey(createSigningKey(join(reenrolled.dir, 'state-2')).key_file);
  enrollAndInstall(reenrolled.store, newKey);
  assert.equal(
    codeOf(() => importAs(reenrolled, envelopeOf(reenrolled.key, transferParts(d2)))),
    'IMPORT_REGISTRATION_NOT_CURRENT',
  );

  const rotated = makeEvidence(t);
  const d3 = claim(rotated);
  const newToken = join(rotated.dir, 'rotated.token');
  withWrite(rotated, (auth) => rotateGrant(auth, rotated.grantId, newToken, Date.now()));
  assert.equal(
    codeOf(() => importAs(rotated, envelopeOf(rotated.key, transferParts(d3)))),
    'GRANT_TOKEN_REJECTED',
  );
  assert.equal(
    codeOf(() => importAs(rotated, envelopeOf(rotated.key, transferParts(d3)), newToken)),
    'IMPORT_ORIGIN_NOT_LIVE',
  );

  const grantRevoked = makeEvidence(t);
  const d4 = claim(grantRevoked);
  withWrite(grantRevoked, (auth) => revokeGrant(auth, grantRevoked.grantId, Date.now()));
  assert.equal(
    codeOf(() => importAs(grantRevoked, envelopeOf(grantRevoked.key, transferParts(d4)))),
    'GRANT_TOKEN_REJECTED',
  );

  for (const ev of [revoked, reenrolled, rotated, grantRevoked]) assert.equal(transferCount(ev), 0);
});

test("old fence after reconcile: the superseded attempt's transfer is IMPORT_FENCE_STALE; a fresh claim's transfer imports", (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const reconcile = {
    version: 1,
    request_id: 'r-reconcile',
    action: 'reconcile',
    task_id: descriptor.task.task_id,
    task_digest: descriptor.task.task_digest,
    attempt_id: descriptor.attempt.attempt_id,
    attempt_digest: descriptor.attempt.attempt_digest,
    execution_operation_id: descriptor.attempt.execution_operation_id,
    agent: { owner_id: 'alice', agent_id: 'agent-1' },
    executor: { ...descriptor.executor },
    fence: descriptor.attempt.fence,
    reason: 'collector lost',
  };
  callWithTokenFile({
    store: openStore(ev.store.dataDir, { mode: 'write' }),
    tokenFile: ev.tokenFile,
    operation: 'reconcile',
    input: encodeCanonical(reconcile),
    profile: 'default',
    target: 'main',
  });
  assert.equal(
    codeOf(() => importAs(ev, envelopeOf(ev.key, transferParts(descriptor)))),
    'IMPORT_FENCE_STALE',
  );
  assert.equal(transferCount(ev), 0);
  const fresh = claim(ev);
  assert.equal(fresh.attempt.fence, 3n, 'the reconcile issued fence 2; the fresh claim the next');
  assert.equal(importAs(ev, envelopeOf(ev.key, transferParts(fresh))).status, 'imported');
});

test('a transfer for a subject that moved (a new Change version after the claim) is refused with TASK_STALE and nothing is imported', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  checkpoint(ev.store, ev.store.revision);
  assert.equal(
    codeOf(() => importAs(ev, envelopeOf(ev.key, transferParts(descriptor)))),
    'TASK_STALE',
  );
  assert.equal(transferCount(ev), 0);
});

test('the exact retry after the subject moved answers the retained import with subject_current false', (t) => {
  const ev = makeEvidence(t);
  const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
  const first = importAs(ev, envelope);
  checkpoint(ev.store, ev.store.revision);
  const retry = importAs(ev, envelope);
  assert.equal(retry.status, 'retained');
  assert.equal(retry.transfer_digest, first.transfer_digest);
  assert.equal(retry.currently_applicable, false);
  assert.deepEqual(retry.applicability, { subject_current: false, registration_current: true, origin_current: true });
});

test('records are closed and bounded: an unknown or missing member at any depth, or a record past 64 KiB, is IMPORT_RECORD_INVALID before anything is imported', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const parts = transferParts(descriptor);
  const stdout = parts.record.stdout as JsonObject;
  const cleanup = parts.record.cleanup as JsonObject;
  const { error: _dropped, ...withoutError } = parts.record;
  const cases: [string, JsonObject][] = [
    ['unknown top-level member', { ...parts.record, padding: 'x' }],
    ['unknown stream member', { ...parts.record, stdout: { ...stdout, extra: true } }],
    ['unknown cleanup member', { ...parts.record, cleanup: { ...cleanup, extra: 1 } }],
    ['missing member', withoutError],
    ['past the bound', { ...parts.record, error: 'x'.repeat(64 * 1024) }],
  ];
  for (const [name, record] of cases) {
    assert.equal(
      codeOf(() => importAs(ev, envelopeOf(ev.key, { ...parts, record }))),
      'IMPORT_RECORD_INVALID',
      name,
    );
  }
  assert.equal(transferCount(ev), 0);
  const answer = importAs(ev, envelopeOf(ev.key, parts));
  assert.equal(answer.status, 'imported');
});
