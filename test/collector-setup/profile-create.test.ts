/**
 * `agent-task profile create` builds, without installing, the command profile of a step for the
 * key's current enrollment: the file it writes installs as is; it changes nothing in the store.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { RUNTIME, storeRows } from './support.js';

interface Created {
  collector_profile_id: string;
  profile: { step_id: string; registration_id: string };
  executor_id: string;
  runtime: { docker: string };
  out: string | null;
}

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

function refused(result: CliResult, code: string): void {
  assert.notEqual(result.code, 0, result.stdout);
  assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, code, result.stderr);
}

test('profile create prints or writes an installable profile and changes nothing', async (t) => {
  const s = await buildScenario(t);
  const create = (args: readonly string[], env?: Record<string, string>): Promise<CliResult> =>
    s.cli(['agent-task', 'profile', 'create', '--step', 'check', ...args], env ? { env } : {});
  const before = storeRows(s.dataDir);

  // Human form without --out: the profile itself, ready to redirect into a file.
  const printed = JSON.parse(ok(await create(['--state-dir', s.stateDir, ...RUNTIME]), 'create').stdout) as {
    step_id: string;
    registration_id: string;
  };
  assert.equal(printed.step_id, 'check');
  assert.equal(printed.registration_id, s.registration?.registration_id);

  const out = join(s.root, 'check.profile.json');
  const written = jsonOf<Created>(
    ok(await create(['--state-dir', s.stateDir, ...RUNTIME, '--out', out, '--json']), 'out'),
  );
  assert.equal(written.out, out);
  assert.equal(written.executor_id, 'box-1');
  assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), printed);
  assert.equal(storeRows(s.dataDir), before, 'profile create installed something');
  refused(await create(['--state-dir', s.stateDir, ...RUNTIME, '--out', out, '--json']), 'IO_ERROR');

  const installed = jsonOf<{ collector_profile_id: string; installed: boolean }>(
    ok(await s.cli(['agent-task', 'profile', 'install', out, '--json']), 'profile install'),
  );
  assert.equal(installed.collector_profile_id, written.collector_profile_id);
  assert.equal(installed.installed, true);

  // --public-key names the same enrollment; with no --docker the docker on PATH is hashed.
  const bin = join(s.root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'docker'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(bin, 'docker'), 0o755);
  const byKey = jsonOf<Created>(
    ok(
      await create(['--public-key', s.publicKey, '--docker-socket', RUNTIME[3], '--json'], {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
      }),
      'create by public key',
    ),
  );
  assert.equal(byKey.runtime.docker, join(bin, 'docker'));
  assert.equal(byKey.profile.registration_id, s.registration?.registration_id);
  assert.notEqual(byKey.collector_profile_id, written.collector_profile_id, 'another executable, another identity');

  // A key with no enrollment for the step, an executor at and past the id bound, no key at all.
  const other = join(s.root, 'other-collector');
  ok(await runCli(['agent-task', 'key', '--state-dir', other]), 'agent-task key');
  refused(await create(['--state-dir', other, ...RUNTIME, '--json']), 'COLLECTOR_SETUP_NOT_ENROLLED');
  const at = ['--state-dir', s.stateDir, ...RUNTIME, '--json', '--executor'];
  refused(await create([...at, 'x'.repeat(128)]), 'COLLECTOR_SETUP_NOT_ENROLLED');
  refused(await create([...at, 'x'.repeat(129)]), 'ID_INVALID');
  refused(await create([...RUNTIME, '--json']), 'USAGE');
});
