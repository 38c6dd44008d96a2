/**
 * `qualification` (docs/qualification.md): every task state, every failure code and every `next`
 * on real stores through the real evidence path — collector claims, signed envelopes imported by
 * the authority, receipts written by the import or by collector_finalize — with each answer
 * checked by the strict decoder.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { formatJson } from '../../src/contracts/json/canonical-json.js';
import { revokeGrantInStore, rotateGrantInStore } from '../../src/native/grants.js';
import { openAuthority } from '../../src/native/store.js';
import { withStore } from '../../src/tasks/store.js';
import { finalize, importEnvelope, killedImport, qualifyAs, statesOf } from '../support/admission.js';
import { claim, envelopeOf, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { makeGrant } from '../support/grants.js';
import { addRevision, bumpPolicy, CHANGE_ID, checkpoint, defaultFiles, enroll, revoke } from '../support/tasks.js';

const BOB = { owner_id: 'bob', agent_id: 'agent-2' };

function unitId(ev: Evidence): string {
  const answer = qualifyAs(ev);
  const unit = answer.tasks.find((task) => task.step_id === 'unit');
  assert.ok(unit !== undefined);
  return unit.task_id;
}

/** Claim, collect (a passing record) and import: the receipt is written by the import. */
function passedImport(ev: Evidence): { readonly receipt_digest: string } {
  const answer = importEnvelope(ev, envelopeOf(ev.key, transferParts(claim(ev))));
  const receipt = answer.receipt as { status: string; receipt_digest: string };
  assert.equal(receipt.status, 'written', formatJson(answer));
  return receipt;
}

test('a subject with nothing claimed: pending command task, task_pending, next collector_claim with its task_id; the optional capability does not block', (t) => {
  const ev = makeEvidence(t);
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, false);
  assert.equal(answer.subject_current, true);
  assert.equal(answer.receipt_digest, null);
  assert.equal(answer.revision, ev.store.revision);
  assert.deepEqual(statesOf(answer), { paths: 'succeeded', unit: 'pending', cap: 'blocked' });
  const unit = answer.tasks.find((task) => task.step_id === 'unit');
  assert.deepEqual(answer.failures, [{ task_id: unit?.task_id, code: 'task_pending' }]);
  assert.deepEqual(answer.next, {
    operation: 'collector_claim',
    task_id: unit?.task_id,
    collector_profile_id: ev.profileId,
  });
});

test('a collector claim under a live lease: claimed, attempt_in_progress, next none; past its lease: uncertain, attempt_uncertain, next reconcile', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const live = qualifyAs(ev);
  assert.equal(statesOf(live).unit, 'claimed');
  assert.deepEqual(live.failures, [{ task_id: descriptor.task.task_id, code: 'attempt_in_progress' }]);
  assert.deepEqual(live.next, { operation: 'none' });

  const expired = qualifyAs(ev, { now: Date.now() + 2 * 3_600_000 });
  assert.equal(statesOf(expired).unit, 'uncertain');
  assert.deepEqual(expired.failures, [{ task_id: descriptor.task.task_id, code: 'attempt_uncertain' }]);
  assert.deepEqual(expired.next, { operation: 'reconcile', task_id: descriptor.task.task_id });
  assert.equal(expired.qualified, false);
});

test('a passing imported transfer with its receipt qualifies: receipt_digest is the retained receipt, no failures, next none', (t) => {
  const ev = makeEvidence(t);
  const receipt = passedImport(ev);
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, true);
  assert.equal(answer.subject_current, true);
  assert.equal(answer.receipt_digest, receipt.receipt_digest);
  assert.equal(answer.revision, ev.store.revision);
  assert.deepEqual(statesOf(answer), { paths: 'succeeded', unit: 'succeeded', cap: 'blocked' });
  assert.deepEqual(answer.failures, []);
  assert.deepEqual(answer.next, { operation: 'none' });
});

test('a failed collector record: failed, collector_not_passed, next none (a retry needs a new checkpoint)', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const parts = transferParts(descriptor);
  parts.record = { ...parts.record, outcome: 'failed', exit_code: 1 };
  const imported = importEnvelope(ev, envelopeOf(ev.key, parts));
  assert.equal(imported.outcome, 'failed', formatJson(imported));
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, false);
  assert.equal(statesOf(answer).unit, 'failed');
  assert.deepEqual(answer.failures, [{ task_id: descriptor.task.task_id, code: 'collector_not_passed' }]);
  assert.deepEqual(answer.next, { operation: 'none' });
  assert.equal(answer.receipt_digest, null);
});

test('an import killed before its receipt: receipt_missing and next collector_finalize; after collector_finalize the subject qualifies', async (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  await killedImport(ev, envelopeOf(ev.key, transferParts(descriptor)));
  const missing = qualifyAs(ev);
  assert.equal(missing.qualified, false);
  assert.equal(statesOf(missing).unit, 'succeeded');
  assert.deepEqual(missing.failures, [{ task_id: descriptor.task.task_id, code: 'receipt_missing' }]);
  assert.deepEqual(missing.next, { operation: 'collector_finalize' });
  assert.equal(missing.receipt_digest, null);

  const written = finalize(ev);
  assert.equal(written.status, 'written');
  const after = qualifyAs(ev);
  assert.equal(after.qualified, true);
  assert.equal(after.receipt_digest, written.receipt_digest);
});

/** Fault injection beside the real path: flip the last byte of one retained column (its immutability trigger dropped first). */
function tamper(
  ev: Evidence,
  table: 'collector_transfers' | 'collector_receipts',
  column: 'envelope' | 'receipt',
): void {
  const journal = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    journal.db.exec(`DROP TRIGGER ${table}_immutable`);
    const row = journal.db.prepare(`SELECT rowid AS id, ${column} AS bytes FROM ${table}`).get() as {
      id: number;
      bytes: Buffer;
    };
    const changed = Buffer.from(row.bytes);
    changed[changed.length - 2] = (changed[changed.length - 2] as number) ^ 1;
    journal.db.prepare(`UPDATE ${table} SET ${column} = ? WHERE rowid = ?`).run(changed, row.id);
  } finally {
    journal.close();
  }
}

for (const [what, table, column] of [
  [
    'a retained envelope changed after its receipt (it no longer has its stored digest)',
    'collector_transfers',
    'envelope',
  ],
  ['retained receipt bytes that no longer have the stored digest', 'collector_receipts', 'receipt'],
] as const) {
  test(`${what}: receipt_invalid, not qualified`, (t) => {
    const ev = makeEvidence(t);
    passedImport(ev);
    assert.equal(qualifyAs(ev).qualified, true);
    tamper(ev, table, column);
    const answer = qualifyAs(ev);
    assert.equal(answer.qualified, false);
    assert.equal(answer.receipt_digest, null);
    assert.deepEqual(answer.failures, [{ task_id: unitId(ev), code: 'receipt_invalid' }]);
    assert.deepEqual(answer.next, { operation: 'none' });
  });
}

test('revocation of the executor registration after the receipt: authorization_changed, not qualified', (t) => {
  const ev = makeEvidence(t);
  passedImport(ev);
  assert.equal(qualifyAs(ev).qualified, true);
  revoke(ev.store, ev.enrollment.registration_id);
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, false);
  assert.equal(answer.receipt_digest, null);
  assert.equal(statesOf(answer).unit, 'blocked');
  assert.deepEqual(answer.failures, [{ task_id: unitId(ev), code: 'authorization_changed' }]);
  assert.deepEqual(answer.next, { operation: 'none' });
});

test('revocation or rotation of the origin grant after the receipt: authorization_changed for any caller', (t) => {
  const ev = makeEvidence(t);
  passedImport(ev);
  const bob = makeGrant(ev.store.dataDir, ev.dir, BOB).token_file;
  assert.equal(qualifyAs(ev, { tokenFile: bob }).qualified, true);

  // Rotation: the origin generation the claim recorded is no longer live.
  const rotated = withStore(ev.store.dataDir, 'write', (s) =>
    rotateGrantInStore(s, ev.grantId, `${ev.tokenFile}.rotated`, Date.now()),
  );
  const afterRotation = qualifyAs(ev, { tokenFile: rotated.token_file });
  assert.equal(afterRotation.qualified, false);
  assert.deepEqual(
    afterRotation.failures.map((f) => f.code),
    ['authorization_changed'],
  );

  withStore(ev.store.dataDir, 'write', (s) => revokeGrantInStore(s, ev.grantId, Date.now()));
  const afterRevocation = qualifyAs(ev, { tokenFile: bob });
  assert.equal(afterRevocation.qualified, false);
  assert.equal(afterRevocation.receipt_digest, null);
  assert.deepEqual(
    afterRevocation.failures.map((f) => f.code),
    ['authorization_changed'],
  );
});

test('a live collector claim whose origin grant was revoked: claimed, authorization_changed', (t) => {
  const ev = makeEvidence(t);
  const descriptor = claim(ev);
  const bob = makeGrant(ev.store.dataDir, ev.dir, BOB).token_file;
  withStore(ev.store.dataDir, 'write', (s) => revokeGrantInStore(s, ev.grantId, Date.now()));
  const answer = qualifyAs(ev, { tokenFile: bob });
  assert.equal(statesOf(answer).unit, 'claimed');
  assert.deepEqual(answer.failures, [{ task_id: descriptor.task.task_id, code: 'authorization_changed' }]);
});

test('after a checkpoint: the older subject is superseded (subject_current false, no tasks, next checkpoint, its own revision); the new one waits on the older unresolved attempt', (t) => {
  const ev = makeEvidence(t);
  const old = claim(ev);
  const oldContext = ev.store.contextDigest;
  const oldRevision = ev.store.revision;
  const revision = addRevision(
    ev.store.dataDir,
    ev.store.repository,
    defaultFiles({ 'b.txt': 'beta' }),
    ev.store.revision,
  );
  checkpoint(ev.store, revision);

  const superseded = qualifyAs(ev, { contextDigest: oldContext });
  assert.deepEqual(superseded, {
    qualified: false,
    subject_current: false,
    receipt_digest: null,
    revision: oldRevision,
    tasks: [],
    failures: [],
    next: { operation: 'checkpoint' },
  });

  const current = qualifyAs(ev);
  assert.equal(current.subject_current, true);
  assert.equal(current.revision, revision);
  const unit = current.tasks.find((task) => task.step_id === 'unit');
  assert.equal(unit?.state, 'blocked');
  assert.notEqual(unit?.task_id, old.task.task_id);
  assert.deepEqual(current.failures, [{ task_id: unit?.task_id, code: 'prior_subject_unresolved' }]);
  assert.deepEqual(current.next, { operation: 'reconcile', task_id: old.task.task_id });
});

test('a revision whose source paths no longer match: source_paths_failed, and the command step that needs it is blocked by dependency_incomplete', (t) => {
  const ev = makeEvidence(t);
  const revision = addRevision(
    ev.store.dataDir,
    ev.store.repository,
    defaultFiles({ 'a.txt': 'changed' }),
    ev.store.revision,
  );
  checkpoint(ev.store, revision);
  const answer = qualifyAs(ev);
  assert.deepEqual(statesOf(answer), { paths: 'failed', unit: 'blocked', cap: 'blocked' });
  const ids = Object.fromEntries(answer.tasks.map((task) => [task.step_id, task.task_id]));
  assert.deepEqual(answer.failures, [
    { task_id: ids.paths, code: 'source_paths_failed' },
    { task_id: ids.unit, code: 'dependency_incomplete' },
  ]);
  assert.deepEqual(answer.next, { operation: 'none' });
  assert.equal(CHANGE_ID, 'change-1');
});

test('re-enrollment of the executor after the receipt (a new epoch replaces the claimed registration): authorization_changed', (t) => {
  const ev = makeEvidence(t);
  passedImport(ev);
  assert.equal(qualifyAs(ev).qualified, true);
  enroll(ev.store, 'unit', 'box-1');
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, false);
  assert.deepEqual(answer.failures, [{ task_id: unitId(ev), code: 'authorization_changed' }]);
});

test('a policy epoch bump after the receipt supersedes the subject: subject_current false, checkpoint', (t) => {
  const ev = makeEvidence(t);
  passedImport(ev);
  assert.equal(qualifyAs(ev).qualified, true);
  bumpPolicy(ev.store);
  assert.deepEqual(qualifyAs(ev), {
    qualified: false,
    subject_current: false,
    receipt_digest: null,
    revision: ev.store.revision,
    tasks: [],
    failures: [],
    next: { operation: 'checkpoint' },
  });
});
