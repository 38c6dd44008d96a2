/**
 * docs/cli.md "Prefixes": a review-context digest (`--context` of agent-task call, agent-task
 * claim and qualification) and a collector profile ID (`agent-task profile show`, `agent-task
 * claim --profile`) may be given as a unique prefix of at least 8 hex digits; an unknown prefix
 * is the not-found code with 0 candidates, a shorter one ID_INVALID, an ambiguous one
 * ID_PREFIX_AMBIGUOUS with the count. Real store, real grant, real CLI processes.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { makeEvidence } from '../support/evidence.js';
import { CHANGE_ID } from '../support/tasks.js';

function assertCode(result: CliResult, code: string): string {
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, new RegExp(`^error\\[${code}\\]: `));
  return result.stderr;
}

/** An 8-digit prefix that starts none of `values`. */
function unknownPrefix(values: readonly string[]): string {
  return [...'0123456789abcdef'].map((c) => c.repeat(8)).find((p) => !values.some((v) => v.startsWith(p))) ?? '';
}

test('a unique prefix of 8 hex digits names the review context and the collector profile; unknown, short and ambiguous prefixes are refused', async (t) => {
  const ev = makeEvidence(t);
  const data = ev.store.dataDir;
  const context = ev.store.contextDigest;
  const profile = ev.profileId;
  const cli = (args: string[]): Promise<CliResult> => runCli(['--data-dir', data, ...args]);
  const call = (ctx: string): Promise<CliResult> =>
    cli([
      'agent-task',
      'call',
      'requirements',
      '--token-file',
      ev.tokenFile,
      '--change',
      CHANGE_ID,
      '--context',
      ctx,
      '--json',
    ]);
  const qualification = (ctx: string): Promise<CliResult> =>
    cli(['qualification', '--change', CHANGE_ID, '--context', ctx, '--json']);
  const show = (id: string): Promise<CliResult> => cli(['agent-task', 'profile', 'show', id, '--json']);
  let outs = 0;
  const claim = (id: string, ctx: string): { out: string; run: Promise<CliResult> } => {
    outs += 1;
    const out = join(ev.dir, `d-${outs}.json`);
    return {
      out,
      run: cli([
        'agent-task',
        'claim',
        '--profile',
        id,
        '--change',
        CHANGE_ID,
        '--context',
        ctx,
        '--token-file',
        ev.tokenFile,
        '--out',
        out,
        '--json',
      ]),
    };
  };

  // A unique 8-digit prefix answers exactly what the full value answers.
  const fullCall = await call(context);
  assert.equal(fullCall.code, 0, fullCall.stderr);
  const prefixCall = await call(context.slice(0, 8));
  assert.equal(prefixCall.code, 0, prefixCall.stderr);
  assert.equal(prefixCall.stdout, fullCall.stdout);
  const fullQ = await qualification(context);
  const prefixQ = await qualification(context.slice(0, 8));
  assert.equal(prefixQ.code, fullQ.code, prefixQ.stderr);
  assert.equal(prefixQ.stdout, fullQ.stdout);
  assert.match(fullQ.stdout, /"qualified"/);
  const fullShow = await show(profile);
  assert.equal(fullShow.code, 0, fullShow.stderr);
  const prefixShow = await show(profile.slice(0, 8));
  assert.equal(prefixShow.code, 0, prefixShow.stderr);
  assert.equal(prefixShow.stdout, fullShow.stdout);
  assert.equal(jsonOf<{ collector_profile_id: string }>(prefixShow).collector_profile_id, profile);

  // Unknown prefixes: the not-found code with 0 candidates, and nothing claimed or written.
  const noContext = unknownPrefix([context]);
  const noProfile = unknownPrefix([profile]);
  assert.match(
    assertCode(await call(noContext), 'CONTEXT_NOT_FOUND'),
    /no review context starts with [0-9a-f]{8} \(0 candidates\)/,
  );
  assert.match(assertCode(await qualification(noContext), 'CONTEXT_NOT_FOUND'), /\(0 candidates\)/);
  assert.match(
    assertCode(await show(noProfile), 'COLLECTOR_PROFILE_NOT_FOUND'),
    /no collector profile starts with [0-9a-f]{8} \(0 candidates\)/,
  );
  const unknownClaimContext = claim(profile, noContext);
  assert.match(assertCode(await unknownClaimContext.run, 'CONTEXT_NOT_FOUND'), /\(0 candidates\)/);
  assert.equal(existsSync(unknownClaimContext.out), false);
  const unknownClaimProfile = claim(noProfile, context);
  assert.match(assertCode(await unknownClaimProfile.run, 'COLLECTOR_PROFILE_NOT_FOUND'), /\(0 candidates\)/);
  assert.equal(existsSync(unknownClaimProfile.out), false);

  // Seven digits are too short.
  assertCode(await call(context.slice(0, 7)), 'ID_INVALID');
  assertCode(await qualification(context.slice(0, 7)), 'ID_INVALID');
  assertCode(await show(profile.slice(0, 7)), 'ID_INVALID');
  const shortClaim = claim(profile.slice(0, 7), context);
  assertCode(await shortClaim.run, 'ID_INVALID');
  assert.equal(existsSync(shortClaim.out), false);

  // The claim itself through prefixes: the descriptor carries the full values.
  const claimed = claim(profile.slice(0, 8), context.slice(0, 8));
  const claimedRun = await claimed.run;
  assert.equal(claimedRun.code, 0, claimedRun.stderr);
  const descriptor = JSON.parse(readFileSync(claimed.out, 'utf8')) as {
    collector_profile_id: string;
    subject: { context_digest: string };
  };
  assert.equal(descriptor.collector_profile_id, profile);
  assert.equal(descriptor.subject.context_digest, context);

  // Two crafted rows sharing a prefix make it ambiguous, with the count.
  const db = new Database(join(data, 'native', 'authority.sqlite'));
  try {
    for (const digit of ['1', '2']) {
      db.prepare(
        `INSERT INTO review_contexts SELECT repository, ?, change_id, change_version, revision, policy_epoch, recipe_path, recipe_digest, toolchain, environment, canonical, created_at_ms FROM review_contexts WHERE context_digest = ?`,
      ).run(`deadbeef${digit.repeat(56)}`, context);
      db.prepare(
        `INSERT INTO collector_profiles SELECT ?, repository, workflow_profile, step, registration_id, canonical, installed_at_ms, (SELECT max(seq) + 1 FROM collector_profiles) FROM collector_profiles WHERE collector_profile_id = ?`,
      ).run(`deadbeef${digit.repeat(56)}`, profile);
    }
  } finally {
    db.close();
  }
  assert.match(
    assertCode(await call('deadbeef'), 'ID_PREFIX_AMBIGUOUS'),
    /review context prefix deadbeef matches 2 candidates; give more digits/,
  );
  assert.match(assertCode(await qualification('deadbeef'), 'ID_PREFIX_AMBIGUOUS'), /matches 2 candidates/);
  assert.match(
    assertCode(await show('deadbeef'), 'ID_PREFIX_AMBIGUOUS'),
    /collector profile prefix deadbeef matches 2 candidates; give more digits/,
  );
  const ambiguousClaim = claim('deadbeef', context);
  assert.match(assertCode(await ambiguousClaim.run, 'ID_PREFIX_AMBIGUOUS'), /matches 2 candidates/);
  assert.equal(existsSync(ambiguousClaim.out), false);
});
