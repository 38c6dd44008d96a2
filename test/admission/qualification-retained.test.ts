/**
 * What qualification re-reads of the retained evidence, and what it leaves to admission
 * (docs/qualification.md "Evidence: what is re-read"): every retained envelope must have the
 * stored length and SHA-256 the receipt names, and the retained receipt must be exactly the
 * canonical bytes of the receipt rebuilt now; the signatures, verified strictly at import, are
 * verified again by admission (approve, land), not by the advisory answer. Real stores through
 * the real evidence path; the journal is rewritten directly only as fault injection (its
 * immutability triggers dropped first).
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { TRANSFER_LIMITS, transferHeaderDigest } from '../../src/contracts/collector/transfer.js';
import { domainDigest, DOMAINS } from '../../src/contracts/digest.js';
import { isAgentscmError } from '../../src/contracts/errors.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { decodeReceiptV2, receiptV2ToJson } from '../../src/contracts/receipt/receipt-v2.js';
import { hexToBytes } from '../../src/contracts/task/common.js';
import { generateKeyPair, signDigest } from '../../src/crypto/ed25519.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { openAuthority, type Authority } from '../../src/native/store.js';
import { approveChange } from '../../src/tasks/admission/admission.js';
import { withStore } from '../../src/tasks/store.js';
import { importEnvelope, qualifyAs } from '../support/admission.js';
import { claim, envelopeOf, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { CHANGE_ID, PROFILE } from '../support/tasks.js';

/** Claim, collect (a passing record) and import: the receipt is written by the import. */
function imported(ev: Evidence): void {
  const answer = importEnvelope(ev, envelopeOf(ev.key, transferParts(claim(ev))));
  assert.equal((answer.receipt as { status: string }).status, 'written', formatJson(answer));
  assert.equal(qualifyAs(ev).qualified, true);
}

/** Fault injection: rewrite the authority's transfer and receipt rows directly, their immutability triggers dropped first. */
function rewriteJournal(ev: Evidence, body: (journal: Authority) => void): void {
  const journal = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    journal.db.exec('DROP TRIGGER IF EXISTS collector_transfers_immutable');
    journal.db.exec('DROP TRIGGER IF EXISTS collector_receipts_immutable');
    body(journal);
  } finally {
    journal.close();
  }
}

/**
 * Replace the signature of the retained envelope by one a key nobody enrolled made over the same
 * header, and rewrite its stored digest to match (the length is the same). With `receipt`, also
 * rewrite the retained receipt to name that digest, under the receipt's own digest.
 */
function forgeEnvelope(ev: Evidence, receipt: boolean): void {
  const forger = generateKeyPair();
  rewriteJournal(ev, (journal) => {
    const row = journal.db.prepare('SELECT rowid AS id, envelope, transfer_digest FROM collector_transfers').get() as {
      id: number;
      envelope: Buffer;
      transfer_digest: string;
    };
    const forged = Buffer.from(row.envelope);
    const headerLength = forged.readUInt32BE(TRANSFER_LIMITS.prefixBytes - 4);
    const header = forged.subarray(TRANSFER_LIMITS.prefixBytes, TRANSFER_LIMITS.prefixBytes + headerLength);
    forged.set(
      signDigest(hexToBytes(transferHeaderDigest(header)), forger.privateKey),
      TRANSFER_LIMITS.prefixBytes + headerLength,
    );
    assert.notDeepEqual(forged, row.envelope);
    journal.db
      .prepare('UPDATE collector_transfers SET envelope = ?, transfer_digest = ? WHERE rowid = ?')
      .run(forged, sha256Hex(forged), row.id);
    if (!receipt) return;
    const stored = journal.db.prepare('SELECT rowid AS id, receipt FROM collector_receipts').get() as {
      id: number;
      receipt: Buffer;
    };
    const value = receiptV2ToJson(decodeReceiptV2(stored.receipt));
    const task = (value.tasks as JsonObject[]).find((t) => t.transfer_digest === row.transfer_digest);
    assert.ok(task !== undefined, 'the receipt names the retained transfer');
    task.transfer_digest = sha256Hex(forged);
    const bytes = encodeCanonical(value);
    journal.db
      .prepare('UPDATE collector_receipts SET receipt = ?, receipt_digest = ? WHERE rowid = ?')
      .run(bytes, domainDigest(DOMAINS.receipt, bytes), stored.id);
  });
}

function approve(ev: Evidence): unknown {
  try {
    return withStore(ev.store.dataDir, 'write', (store) =>
      approveChange(store, { profile: PROFILE, target: 'main', change: CHANGE_ID }),
    );
  } catch (error) {
    return error;
  }
}

test('a retained envelope replaced together with its stored digest: receipt_invalid, since the receipt names the digest of the envelope that was imported', (t) => {
  const ev = makeEvidence(t);
  imported(ev);
  forgeEnvelope(ev, false);
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, false);
  assert.equal(answer.receipt_digest, null);
  assert.deepEqual(
    answer.failures.map((failure) => failure.code),
    ['receipt_invalid'],
  );
});

test('a journal rewritten consistently around a forged envelope (envelope, digest and receipt): the advisory answer checks digests only, and approval, which verifies every signature again, refuses', (t) => {
  const ev = makeEvidence(t);
  imported(ev);
  forgeEnvelope(ev, true);
  // The limit docs/qualification.md states: qualification does not re-verify signatures.
  assert.equal(qualifyAs(ev).qualified, true);
  const refused = approve(ev);
  assert.ok(isAgentscmError(refused), `approve must refuse, got ${formatJson(refused as JsonObject)}`);
  assert.equal(refused.code, 'ADMISSION_NOT_QUALIFIED');
  assert.match(refused.message, /receipt_invalid/);
});

test('retained receipt bytes that are not their canonical encoding, under the stored digest of the canonical bytes: receipt_invalid (an exported bundle would not verify)', (t) => {
  const ev = makeEvidence(t);
  imported(ev);
  rewriteJournal(ev, (journal) => {
    const stored = journal.db.prepare('SELECT rowid AS id, receipt FROM collector_receipts').get() as {
      id: number;
      receipt: Buffer;
    };
    assert.equal(stored.receipt.subarray(0, 1).toString(), '{');
    const spaced = Buffer.concat([Buffer.from('{ '), stored.receipt.subarray(1)]);
    journal.db.prepare('UPDATE collector_receipts SET receipt = ? WHERE rowid = ?').run(spaced, stored.id);
  });
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, false);
  assert.deepEqual(
    answer.failures.map((failure) => failure.code),
    ['receipt_invalid'],
  );
});
