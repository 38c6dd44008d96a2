/**
 * The scenario builder, and through it the end-to-end sequence of docs/architecture.md
 * ("One change, end to end"): checkpoint → claim → collect → import → qualify → approve → land,
 * each a real CLI process against a real store and the real container runtime. A failing check
 * is refused at qualification; the passing one lands and its receipt verifies offline.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { RUNTIME_FLAGS } from '../support/runtime.js';
import { jsonOf, runCli, type CliResult } from './cli.js';
import { buildScenario, SCENARIO_CHANGE, type Scenario } from './scenario.js';

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

async function claimAndCollect(s: Scenario): Promise<{ outcome: string }> {
  const descriptor = join(s.root, 'check.descriptor.json');
  ok(
    await s.cli([
      'agent-task',
      'claim',
      '--profile',
      s.profileId ?? '',
      '--change',
      SCENARIO_CHANGE,
      '--context',
      s.contextDigest,
      '--token-file',
      s.tokenFile,
      '--out',
      descriptor,
    ]),
  );
  return jsonOf<{ outcome: string }>(
    ok(
      await s.cli([
        'agent-task',
        'collect',
        '--descriptor',
        descriptor,
        '--key',
        s.keyFile,
        '--state-dir',
        s.stateDir,
        ...RUNTIME_FLAGS,
        '--token-file',
        s.tokenFile,
        '--json',
      ]),
    ),
  );
}

test('one call builds the operator world; the Change then lands through claim, collect, qualify, approve', async (t) => {
  const s = await buildScenario(t, { profile: true });
  assert.match(s.requirementDigest, /^[0-9a-f]{64}$/);
  assert.match(s.contextDigest, /^[0-9a-f]{64}$/);
  assert.match(s.profileId ?? '', /^[0-9a-f]{64}$/);
  assert.notEqual(s.revision, s.base, 'the checkpoint recorded the edit');
  assert.equal(s.registration?.registration_epoch, 1);

  assert.equal((await claimAndCollect(s)).outcome, 'passed');
  const qualification = jsonOf<{ qualified: boolean; receipt_digest: string | null }>(
    ok(await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json'])),
  );
  assert.equal(qualification.qualified, true);
  ok(await s.cli(['approve', '--change', SCENARIO_CHANGE]));
  ok(await s.cli(['land', '--change', SCENARIO_CHANGE, '--target', 'main']));
  const targets = jsonOf<{ targets: { name: string; revision: string }[] }>(
    ok(await s.cli(['target', 'list', '--json'])),
  );
  assert.equal(targets.targets.find((target) => target.name === 'main')?.revision, s.revision);
  const bundle = join(s.root, 'receipt.agscmrb');
  ok(await s.cli(['receipt', 'export', qualification.receipt_digest ?? '', '--out', bundle]));
  ok(await runCli(['receipt', 'verify', bundle, '--public-key', s.publicKey]));
});

test('with a failing check the same sequence stops at qualification and landing is refused', async (t) => {
  const s = await buildScenario(t, { profile: true, argv: ['/bin/sh', '-c', 'exit 3'] });
  assert.equal((await claimAndCollect(s)).outcome, 'failed');
  const qualification = jsonOf<{ qualified: boolean }>(
    await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']),
  );
  assert.equal(qualification.qualified, false);
  const land = await s.cli(['land', '--change', SCENARIO_CHANGE, '--target', 'main', '--json']);
  assert.notEqual(land.code, 0, 'an unqualified Change does not land');
  const targets = jsonOf<{ targets: { name: string; revision: string }[] }>(
    ok(await s.cli(['target', 'list', '--json'])),
  );
  assert.equal(targets.targets.find((target) => target.name === 'main')?.revision, s.base);
});

test('without a profile or an enrollment the builder stops short of them', async (t) => {
  const s = await buildScenario(t, { enrollStep: null });
  assert.equal(s.registration, null);
  assert.equal(s.profileId, null);
  const registrations = jsonOf<{ registrations: unknown[] }>(
    ok(await s.cli(['agent-task', 'registration', 'list', '--json'])),
  );
  assert.deepEqual(registrations.registrations, []);
});
