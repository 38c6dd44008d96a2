/**
 * `agent-task claim` without `--profile` (docs/agent-tasks.md "agent-task claim"): the profile of
 * `--step`, else of the only step with a current profile; several steps → COLLECTOR_PROFILE_AMBIGUOUS,
 * none → COLLECTOR_PROFILE_NOT_FOUND, and a revoked registration's profile no longer counts.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf } from '../helpers/cli.js';
import { buildScenario, commandStepAction, SCENARIO_CHANGE } from '../helpers/scenario.js';
import { RUNTIME } from './support.js';

interface ClaimAnswer {
  readonly descriptor: { readonly collector_profile_id: string; readonly task: { readonly task_id: string } };
}
interface ErrorDoc {
  readonly error: { readonly code: string; readonly details?: { steps?: { step: string }[] } };
}

test('claim picks the profile of --step or of the only step, and refuses a guess', { timeout: 600_000 }, async (t) => {
  const s = await buildScenario(t, {
    profile: true,
    steps: (binding) => [
      { id: 'check', needs: [], required: true, action: commandStepAction(binding) },
      { id: 'lint', needs: [], required: true, action: commandStepAction(binding) },
    ],
  });
  assert.ok(s.profileId !== null);
  const claim = (out: string, ...extra: string[]) =>
    s.cli([
      'agent-task',
      'claim',
      ...extra,
      '--change',
      SCENARIO_CHANGE,
      '--token-file',
      s.tokenFile,
      '--out',
      join(s.root, out),
      '--json',
    ]);

  // One step has a profile: no flag needed, and the context is the Change's current one.
  const only = await claim('only.json');
  assert.equal(only.code, 0, only.stderr);
  assert.equal(jsonOf<ClaimAnswer>(only).descriptor.collector_profile_id, s.profileId);

  // A step without a profile is named: refused, nothing written.
  const none = await claim('none.json', '--step', 'lint');
  assert.equal(none.code, 2, none.stderr);
  assert.equal(jsonOf<ErrorDoc>(none).error.code, 'COLLECTOR_PROFILE_NOT_FOUND');
  assert.equal(existsSync(join(s.root, 'none.json')), false);

  // A second step gets a profile: without --step the claim no longer guesses.
  const add = await s.cli(['agent-task', 'collector', 'add', '--step', 'lint', '--state-dir', s.stateDir, ...RUNTIME]);
  assert.equal(add.code, 0, add.stderr);
  const ambiguous = await claim('ambiguous.json');
  assert.equal(ambiguous.code, 2, ambiguous.stderr);
  const doc = jsonOf<ErrorDoc>(ambiguous);
  assert.equal(doc.error.code, 'COLLECTOR_PROFILE_AMBIGUOUS');
  assert.deepEqual(
    doc.error.details?.steps?.map((e) => e.step),
    ['check', 'lint'],
  );
  assert.equal(existsSync(join(s.root, 'ambiguous.json')), false);

  const lint = await claim('lint.json', '--step', 'lint');
  assert.equal(lint.code, 0, lint.stderr);
  assert.notEqual(jsonOf<ClaimAnswer>(lint).descriptor.collector_profile_id, s.profileId);

  // --profile and --step together are a usage error.
  const both = await claim('both.json', '--step', 'lint', '--profile', s.profileId);
  assert.equal(both.code, 2);

  // Revoking the first step's registration takes its profile out of the choice.
  assert.ok(s.registration !== null);
  const revoke = await s.cli(['agent-task', 'revoke', s.registration.registration_id]);
  assert.equal(revoke.code, 0, revoke.stderr);
  const after = await claim('after.json', '--step', 'check');
  assert.equal(jsonOf<ErrorDoc>(after).error.code, 'COLLECTOR_PROFILE_NOT_FOUND');
});
