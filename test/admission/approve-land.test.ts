/**
 * `agentscm approve` and `agentscm land` (docs/admission.md) through real processes of
 * bin/dev.js on real stores built by the evidence chain: real collector claims, signed envelopes
 * imported by the authority, receipts written by the import. Each refusal is checked for its code
 * and exit status, and that the target and the approval and landing tables did not change.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import { decodeCollectorProfile } from '../../src/contracts/collector/profile.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import { revokeGrantInStore } from '../../src/native/grants.js';
import { nativePaths, openAuthority } from '../../src/native/store.js';
import { setTarget } from '../../src/native/targets.js';
import { LAND_PAUSE_POINT } from '../../src/tasks/admission/admission.js';
import { transferRuntimeIdentityDigest } from '../../src/tasks/collector/execution.js';
import { installCollectorProfile } from '../../src/tasks/collector/profiles.js';
import { withStore } from '../../src/tasks/store.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, TEST_XDG_DATA_HOME, type CliResult } from '../helpers/cli.js';
import { importEnvelope, qualifyAs } from '../support/admission.js';
import {
  claim,
  envelopeOf,
  makeEvidence,
  RUNTIME_IDENTITY,
  transferParts,
  type Evidence,
} from '../support/evidence.js';
import {
  addRevision,
  bumpPolicy,
  CHANGE_ID,
  checkpoint,
  defaultFiles,
  enroll,
  PROFILE,
  RECIPE,
  revoke,
  sha256,
  type StepSpec,
} from '../support/tasks.js';

interface Landable {
  readonly ev: Evidence;
  /** The target's revision before landing: the base the Change's revision descends from. */
  readonly base: string;
  /** The Change's current revision. */
  readonly revision: string;
}

function cli(ev: Evidence, args: readonly string[]): Promise<CliResult> {
  return runCli(['--data-dir', ev.store.dataDir, ...args]);
}

function errorOf(result: CliResult): { code: string; message: string; hint?: string } {
  return jsonOf<{ error: { code: string; message: string; hint?: string } }>(result).error;
}

function targetOf(ev: Evidence): string {
  const db = new Database(nativePaths(ev.store.dataDir).db, { readonly: true });
  try {
    return (db.prepare("SELECT revision FROM targets WHERE name = 'main'").get() as { revision: string }).revision;
  } finally {
    db.close();
  }
}

function countOf(ev: Evidence, table: 'approvals' | 'landings'): number {
  const db = new Database(nativePaths(ev.store.dataDir).db, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function pointMain(ev: Evidence, revision: string): void {
  const auth = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    setTarget(auth, ev.store.repository, 'main', revision);
  } finally {
    auth.close();
  }
}

/**
 * The evidence store with Change version 2 at a revision whose parent is version 1's, the target
 * main left at that parent (the base), and — unless `collect` is false — the unit step of version
 * 2 claimed, collected (a passing record) and imported, so that its receipt is written.
 */
function makeLandable(t: TestContext, options: { steps?: readonly StepSpec[]; collect?: boolean } = {}): Landable {
  const ev = makeEvidence(t, options.steps);
  const base = ev.store.revision;
  const revision = addRevision(ev.store.dataDir, ev.store.repository, defaultFiles({ 'b.txt': 'beta' }), base);
  checkpoint(ev.store, revision);
  pointMain(ev, base);
  if (options.collect !== false) {
    const imported = importEnvelope(ev, envelopeOf(ev.key, transferParts(claim(ev))));
    assert.equal((imported.receipt as { status: string }).status, 'written', formatJson(imported));
  }
  return { ev, base, revision };
}

async function approve(ev: Evidence, extra: readonly string[] = []): Promise<CliResult> {
  return cli(ev, ['approve', '--change', CHANGE_ID, '--json', ...extra]);
}

async function land(ev: Evidence): Promise<CliResult> {
  return cli(ev, ['land', '--change', CHANGE_ID, '--target', 'main', '--json']);
}

/** A refusal: the exit status and code, and nothing landed. */
function assertRefused(
  l: Landable,
  result: CliResult,
  code: string,
  exit: number,
): { code: string; message: string; hint?: string } {
  assert.equal(result.code, exit, result.stderr);
  const error = errorOf(result);
  assert.equal(error.code, code, error.message);
  assert.match(
    result.stderr,
    new RegExp(`^error\\[${code}\\]: .+; .+`, 'm'),
    'the refusal names its code and next step',
  );
  assert.equal(targetOf(l.ev), l.base, 'the target did not move');
  assert.equal(countOf(l.ev, 'landings'), 0);
  return error;
}

test('approve then land: the target moves to the Change revision; the approval and the landing name the subject and its receipt; target list and revision show see it', async (t) => {
  const l = makeLandable(t);
  const answer = qualifyAs(l.ev);
  assert.equal(answer.qualified, true);

  const approved = await approve(l.ev);
  assert.equal(approved.code, 0, approved.stderr);
  const approval = jsonOf<Record<string, unknown>>(approved);
  assert.equal(approval.created, true);
  assert.equal(approval.change_id, CHANGE_ID);
  assert.equal(approval.change_version, 2);
  assert.equal(approval.revision, l.revision);
  assert.equal(approval.context_digest, l.ev.store.contextDigest);
  assert.equal(approval.target, 'main');
  assert.equal(approval.profile, PROFILE);
  assert.equal(approval.receipt_kind, 'imported');
  assert.equal(approval.receipt_digest, answer.receipt_digest);
  const again = await approve(l.ev, ['--context', l.ev.store.contextDigest.slice(0, 10)]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(
    jsonOf<Record<string, unknown>>(again).created,
    false,
    'approving the same subject again (its context named by a prefix) records nothing new',
  );
  assert.equal(countOf(l.ev, 'approvals'), 1);

  const landed = await land(l.ev);
  assert.equal(landed.code, 0, landed.stderr);
  const landing = jsonOf<Record<string, unknown>>(landed);
  assert.deepEqual(
    {
      target: landing.target,
      previous_revision: landing.previous_revision,
      revision: landing.revision,
      change_version: landing.change_version,
      approval_id: landing.approval_id,
      receipt_kind: landing.receipt_kind,
      receipt_digest: landing.receipt_digest,
    },
    {
      target: 'main',
      previous_revision: l.base,
      revision: l.revision,
      change_version: 2,
      approval_id: approval.approval_id,
      receipt_kind: 'imported',
      receipt_digest: answer.receipt_digest,
    },
  );
  assert.equal(targetOf(l.ev), l.revision);

  const targets = jsonOf<{ targets: { name: string; revision: string }[] }>(
    await cli(l.ev, ['target', 'list', '--json']),
  ).targets;
  assert.deepEqual(
    targets.map((target) => [target.name, target.revision]),
    [['main', l.revision]],
  );
  const shown = await cli(l.ev, ['revision', 'show', l.revision.slice(0, 12), '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`"b\\.txt"`), "the landed revision holds the Change's file");

  // Landing the same approval again: the target already is there.
  const twice = await land(l.ev);
  assert.equal(twice.code, 3, twice.stderr);
  assert.equal(errorOf(twice).code, 'LAND_BASE_MISMATCH');
  assert.equal(countOf(l.ev, 'landings'), 1);
});

test('land without an approval: APPROVAL_NOT_FOUND naming approve as the next step', async (t) => {
  const l = makeLandable(t);
  const error = assertRefused(l, await land(l.ev), 'APPROVAL_NOT_FOUND', 1);
  assert.match(error.hint ?? '', /agentscm approve --change/);
});

test('approval of a stale subject (an older context after a checkpoint) is refused with ADMISSION_SUBJECT_STALE and records nothing', async (t) => {
  const l = makeLandable(t);
  const old = l.ev.store.contextDigest;
  checkpoint(
    l.ev.store,
    addRevision(
      l.ev.store.dataDir,
      l.ev.store.repository,
      defaultFiles({ 'b.txt': 'beta', 'c.txt': 'gamma' }),
      l.revision,
    ),
  );
  pointMain(l.ev, l.base);
  const error = assertRefused(l, await approve(l.ev, ['--context', old]), 'ADMISSION_SUBJECT_STALE', 3);
  assert.match(error.hint ?? '', /qualification --change/);
  assert.equal(countOf(l.ev, 'approvals'), 0);
});

test('an unqualified subject (nothing collected) is refused with ADMISSION_NOT_QUALIFIED naming the task to claim', async (t) => {
  const l = makeLandable(t, { collect: false });
  const error = assertRefused(l, await approve(l.ev), 'ADMISSION_NOT_QUALIFIED', 1);
  assert.match(error.message, /task_pending/);
  assert.match(error.hint ?? '', /claim and collect task t-/);
  assert.equal(countOf(l.ev, 'approvals'), 0);
});

test('a checkpoint after the approval supersedes it: land is refused with ADMISSION_SUBJECT_STALE', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  checkpoint(
    l.ev.store,
    addRevision(
      l.ev.store.dataDir,
      l.ev.store.repository,
      defaultFiles({ 'b.txt': 'beta', 'c.txt': 'gamma' }),
      l.revision,
    ),
  );
  pointMain(l.ev, l.base);
  const error = assertRefused(l, await land(l.ev), 'ADMISSION_SUBJECT_STALE', 3);
  assert.match(error.message, /version 2; the Change is at version 3/);
});

test('revocation of the executor registration between receipt and landing: qualification false, land refused with ADMISSION_AUTHORIZATION_CHANGED', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  revoke(l.ev.store, l.ev.enrollment.registration_id);
  assert.equal(qualifyAs(l.ev).qualified, false);
  assertRefused(l, await land(l.ev), 'ADMISSION_AUTHORIZATION_CHANGED', 1);
});

test('revocation of the origin grant between receipt and landing: land refused with ADMISSION_AUTHORIZATION_CHANGED', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  withStore(l.ev.store.dataDir, 'write', (s) => revokeGrantInStore(s, l.ev.grantId, Date.now()));
  assertRefused(l, await land(l.ev), 'ADMISSION_AUTHORIZATION_CHANGED', 1);
});

test('re-enrollment of the executor after the receipt (a new epoch replaces the claimed registration): land refused with ADMISSION_AUTHORIZATION_CHANGED', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  enroll(l.ev.store, 'unit', 'box-1');
  assertRefused(l, await land(l.ev), 'ADMISSION_AUTHORIZATION_CHANGED', 1);
});

test('a policy epoch bump after the receipt and the approval: land refused with ADMISSION_SUBJECT_STALE', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  bumpPolicy(l.ev.store);
  assertRefused(l, await land(l.ev), 'ADMISSION_SUBJECT_STALE', 3);
});

test('a newer collector profile installed for the step after the receipt replaces it: land refused with ADMISSION_PROFILE_CHANGED', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  const auth = openAuthority(l.ev.store.dataDir, { mode: 'write' });
  try {
    const e = l.ev.enrollment;
    const profile = decodeCollectorProfile(
      encodeCanonical({
        version: 1,
        kind: 'command',
        repository_id: l.ev.store.repository,
        workflow_profile: PROFILE,
        step_id: 'unit',
        registration_id: e.registration_id,
        registration_epoch: e.registration_epoch,
        verification_key_id: e.verification_key_id,
        recipe: RECIPE,
        recipe_digest: sha256(JSON.stringify(RECIPE)),
        runtime_identity_digest: transferRuntimeIdentityDigest({ ...RUNTIME_IDENTITY, engine_version: '28.0.0' }),
      }),
    );
    installCollectorProfile(auth, profile, Date.now());
  } finally {
    auth.close();
  }
  const error = assertRefused(l, await land(l.ev), 'ADMISSION_PROFILE_CHANGED', 1);
  assert.match(error.message, /was replaced by profile/);
  // Qualification answers from the same decision: not qualified, with the profile_changed code.
  const answer = qualifyAs(l.ev);
  assert.equal(answer.qualified, false);
  assert.deepEqual(
    answer.failures.map((failure) => failure.code),
    ['profile_changed'],
  );
});

test('an optional command step whose record failed is no waiver: qualification and approve agree — not qualified (collector_not_passed), approve refused with ADMISSION_COMMAND_REQUIRED (issue #25 item 11)', async (t) => {
  const steps: readonly StepSpec[] = [
    { id: 'paths', kind: 'source_paths' },
    { id: 'unit', kind: 'command', needs: ['paths'], required: false },
  ];
  const l = makeLandable(t, { steps, collect: false });
  const parts = transferParts(claim(l.ev));
  parts.record = { ...parts.record, outcome: 'failed', exit_code: 1 };
  const imported = importEnvelope(l.ev, envelopeOf(l.ev.key, parts));
  assert.equal((imported.receipt as { status: string }).status, 'written', formatJson(imported));
  // The receipt records the optional step as an omission, but admission still needs its
  // command: qualification answers from the same decision, so it is not qualified either.
  const answer = qualifyAs(l.ev);
  assert.equal(answer.qualified, false, 'qualification refuses what approve refuses');
  assert.equal(answer.receipt_digest, null);
  const unit = answer.tasks.find((task) => task.step_id === 'unit');
  assert.deepEqual(answer.failures, [{ task_id: unit?.task_id, code: 'collector_not_passed' }]);
  assert.deepEqual(answer.next, { operation: 'none' });
  const operator = await cli(l.ev, ['qualification', '--change', CHANGE_ID, '--json']);
  assert.equal(operator.code, 1, operator.stderr);
  assert.deepEqual(jsonOf<{ failures: unknown }>(operator).failures, answer.failures);
  const error = assertRefused(l, await approve(l.ev), 'ADMISSION_COMMAND_REQUIRED', 1);
  assert.match(error.message, /command step "unit" \(optional in the graph\)/);
  assert.equal(countOf(l.ev, 'approvals'), 0);
  assertRefused(l, await land(l.ev), 'APPROVAL_NOT_FOUND', 1);
});

test('a target moved by another landing after the approval: LAND_BASE_MISMATCH (exit 3) whose hint says to checkpoint on the new target', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  const other = addRevision(l.ev.store.dataDir, l.ev.store.repository, defaultFiles({ 'x.txt': 'other work' }), l.base);
  assert.equal(targetOf(l.ev), other);
  const result = await land(l.ev);
  assert.equal(result.code, 3, result.stderr);
  const error = errorOf(result);
  assert.equal(error.code, 'LAND_BASE_MISMATCH');
  assert.match(error.hint ?? '', new RegExp(`checkpoint the Change on the target's new revision ${other}`));
  assert.equal(targetOf(l.ev), other, 'the target stays where the other landing put it');
  assert.equal(countOf(l.ev, 'landings'), 0);
});

test('two land processes at once: one lands, the other is refused with a conflict, and the target is at the Change revision with one landing', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  const results = await Promise.all([land(l.ev), land(l.ev)]);
  const codes = results.map((r) => r.code).sort();
  assert.deepEqual(codes, [0, 3], results.map((r) => r.stderr).join('\n'));
  const loser = results.find((r) => r.code === 3) as CliResult;
  assert.ok(['LAND_BASE_MISMATCH', 'STORE_BUSY'].includes(errorOf(loser).code), loser.stderr);
  assert.equal(targetOf(l.ev), l.revision);
  assert.equal(countOf(l.ev, 'landings'), 1);
});

/** A land process paused holding the writer lock with its writes made (LAND_PAUSE_POINT), then SIGKILLed there. */
async function killedLand(ev: Evidence): Promise<void> {
  const child = spawn(
    process.execPath,
    [...cliEntryArgv(), '--data-dir', ev.store.dataDir, 'land', '--change', CHANGE_ID, '--target', 'main'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: LAND_PAUSE_POINT, XDG_DATA_HOME: TEST_XDG_DATA_HOME },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`agentscm-test-paused:${LAND_PAUSE_POINT}`)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, sig) => resolve(sig));
  });
  assert.equal(signal, 'SIGKILL', 'the land process was killed at its pause point');
}

test('a land that waits for the writer lock held by another land rechecks after it: LAND_BASE_MISMATCH, never a second move', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  const resume = join(l.ev.dir, 'resume-land');
  const first = spawn(
    process.execPath,
    [...cliEntryArgv(), '--data-dir', l.ev.store.dataDir, 'land', '--change', CHANGE_ID, '--target', 'main', '--json'],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        AGENTSCM_TEST_PAUSE_AT: LAND_PAUSE_POINT,
        AGENTSCM_TEST_PAUSE_RESUME_FILE: resume,
        XDG_DATA_HOME: TEST_XDG_DATA_HOME,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const firstDone = new Promise<number | null>((resolve, reject) => {
    first.on('error', reject);
    first.on('close', (code) => resolve(code));
  });
  await new Promise<void>((resolve) => {
    let stderr = '';
    first.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`agentscm-test-paused:${LAND_PAUSE_POINT}`)) resolve();
    });
  });
  // The first land holds the writer lock with its writes made; the second starts and waits for it.
  const second = land(l.ev);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  writeFileSync(resume, '');
  assert.equal(await firstDone, 0);
  const refused = await second;
  assert.equal(refused.code, 3, refused.stderr);
  assert.equal(errorOf(refused).code, 'LAND_BASE_MISMATCH');
  assert.equal(targetOf(l.ev), l.revision);
  assert.equal(countOf(l.ev, 'landings'), 1);
});

test('SIGKILL during land (target moved and landing recorded, not committed) leaves the target at its old revision; landing again moves it', async (t) => {
  const l = makeLandable(t);
  assert.equal((await approve(l.ev)).code, 0);
  await killedLand(l.ev);
  assert.equal(targetOf(l.ev), l.base, 'the uncommitted move is gone');
  assert.equal(countOf(l.ev, 'landings'), 0);
  const landed = await land(l.ev);
  assert.equal(landed.code, 0, landed.stderr);
  assert.equal(targetOf(l.ev), l.revision);
  assert.equal(countOf(l.ev, 'landings'), 1);
});

test('bad input changes nothing: an unknown Change is CHANGE_NOT_FOUND, a malformed target name ID_INVALID, a missing data directory STORE_NOT_INITIALIZED', async (t) => {
  const l = makeLandable(t);
  const unknown = await cli(l.ev, ['approve', '--change', 'no-such-change', '--json']);
  assert.equal(errorOf(unknown).code, 'CHANGE_NOT_FOUND', unknown.stderr);
  assert.equal(unknown.code, 2);
  const badTarget = await cli(l.ev, ['land', '--change', CHANGE_ID, '--target', 'a b', '--json']);
  assert.equal(badTarget.code, 2, badTarget.stderr);
  assert.equal(errorOf(badTarget).code, 'ID_INVALID');
  assert.equal(countOf(l.ev, 'approvals'), 0);
  assert.equal(targetOf(l.ev), l.base);
  const missing = await runCli([
    '--data-dir',
    join(l.ev.dir, 'absent'),
    'land',
    '--change',
    CHANGE_ID,
    '--target',
    'main',
    '--json',
  ]);
  assert.equal(missing.code, 4, missing.stderr);
  assert.equal(errorOf(missing).code, 'STORE_NOT_INITIALIZED');
});
