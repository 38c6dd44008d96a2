/**
 * `agent-task collector add` end to end through the real CLI, store, Docker Engine and image: one
 * command sets up the collector, the claim and collect it prints run as printed (placeholders
 * replaced) and the Change qualifies; a rerun answers the same profile and enrolls nothing.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE } from '../helpers/scenario.js';
import { RUNTIME, storeRows, substitute } from './support.js';

interface AddAnswer {
  collector_profile_id: string;
  installed: boolean;
  profile: { step_id: string; registration_id: string; recipe_digest: string };
  key: { key_file: string; public_key: string; created: boolean };
  registration: { registration_id: string; registration_epoch: number; executor_id: string; enrolled: boolean };
  runtime: { docker: string; docker_socket: string; image: string; identity_sha256: string };
  agent_commands: { claim: string[]; collect: string[] };
  placeholders: Record<string, string>;
}

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

test('collector add sets up a collector whose printed commands collect evidence that qualifies', async (t) => {
  const s = await buildScenario(t, { enrollStep: null });
  const stateDir = join(s.root, 'new-collector');
  const add = (extra: readonly string[] = []): Promise<CliResult> =>
    s.cli(['agent-task', 'collector', 'add', '--step', 'check', '--state-dir', stateDir, ...RUNTIME, ...extra]);

  const first = jsonOf<AddAnswer>(ok(await add(['--json']), 'collector add'));
  assert.equal(first.installed, true);
  assert.equal(first.key.created, true);
  assert.equal(first.key.key_file, join(stateDir, 'signing-key.json'));
  assert.equal(statSync(stateDir).mode & 0o777, 0o700);
  assert.equal(first.registration.enrolled, true);
  assert.equal(first.registration.registration_epoch, 1);
  assert.match(first.registration.executor_id, /^collector-[0-9a-f]{12}$/);
  assert.equal(first.profile.step_id, 'check');
  assert.equal(first.profile.registration_id, first.registration.registration_id);
  assert.equal(first.runtime.docker_socket, RUNTIME[3]);
  assert.deepEqual(Object.keys(first.placeholders), ['<CHANGE>', '<TOKEN_FILE>', '<DESCRIPTOR_FILE>']);
  // The installed profile is the one `profile show` reads back, bound to a current registration.
  const shown = jsonOf<{ registration_current: boolean }>(
    ok(await s.cli(['agent-task', 'profile', 'show', first.collector_profile_id, '--json']), 'profile show'),
  );
  assert.equal(shown.registration_current, true);

  // The agent's two commands, exactly as printed, with only the placeholders replaced.
  const values = {
    '<CHANGE>': SCENARIO_CHANGE,
    '<TOKEN_FILE>': s.tokenFile,
    '<DESCRIPTOR_FILE>': join(s.root, 'check.descriptor.json'),
  };
  ok(await runCli(substitute(first.agent_commands.claim, values)), 'the printed claim');
  const collected = jsonOf<{ outcome: string; ran: boolean }>(
    ok(await runCli([...substitute(first.agent_commands.collect, values), '--json']), 'the printed collect'),
  );
  assert.equal(collected.outcome, 'passed');
  assert.equal(collected.ran, true);
  const qualification = jsonOf<{ qualified: boolean }>(
    ok(await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']), 'qualification'),
  );
  assert.equal(qualification.qualified, true);

  // A rerun (human output this time): same profile, same key and registration, nothing enrolled.
  const before = storeRows(s.dataDir);
  const again = ok(await add(), 'collector add again');
  assert.match(again.stdout, new RegExp(`^already installed collector profile ${first.collector_profile_id}$`, 'm'));
  assert.match(again.stdout, /\(existing\), verification_key_id/);
  assert.match(again.stdout, / \(existing\)$/m);
  // The human lines print the same commands, one per line, ready to paste.
  assert.ok(again.stdout.includes(`  ${first.agent_commands.claim.join(' ')}\n`), again.stdout);
  assert.ok(again.stdout.includes(`  ${first.agent_commands.collect.join(' ')}\n`), again.stdout);
  assert.equal(storeRows(s.dataDir), before);
  const third = jsonOf<AddAnswer>(ok(await add(['--json']), 'collector add a third time'));
  assert.equal(third.collector_profile_id, first.collector_profile_id);
  assert.equal(third.installed, false);
  assert.equal(third.key.created, false);
  assert.equal(third.registration.enrolled, false);
  assert.equal(third.registration.registration_id, first.registration.registration_id);
  const registrations = jsonOf<{ registrations: unknown[] }>(
    ok(await s.cli(['agent-task', 'registration', 'list', '--json']), 'registration list'),
  );
  assert.equal(registrations.registrations.length, 1);
});
