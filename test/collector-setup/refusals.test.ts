/**
 * Every refusal of `agent-task collector add` leaves the store's registrations and profiles as they
 * were and creates no state directory; the executor id is bounded at 128 characters.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, type CliResult } from '../helpers/cli.js';
import {
  buildScenario,
  commandStepAction,
  SCENARIO_RECIPE,
  scenarioRecipe,
  type Scenario,
} from '../helpers/scenario.js';
import { RUNTIME, storeRows } from './support.js';

function refused(result: CliResult, code: string, exit: number): void {
  assert.equal(result.code, exit, `exit ${String(result.code)}: ${result.stderr}`);
  assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, code, result.stderr);
  // One line with the fix: a hint, or (ID_INVALID) the rule the value must follow.
  assert.match(result.stderr, new RegExp(`^error\\[${code}\\]: .+(; .+| it must be .+)$`, 'm'));
}

async function add(s: Scenario, stateDir: string, args: readonly string[], env?: Record<string, string>) {
  return s.cli(['agent-task', 'collector', 'add', '--state-dir', stateDir, ...args, '--json'], env ? { env } : {});
}

test('collector add refuses bad steps, runtimes and state directories, changing nothing', async (t) => {
  const s = await buildScenario(t, {
    enrollStep: null,
    steps: (binding) => [
      { id: 'check', needs: [], required: true, action: commandStepAction(binding) },
      { id: 'cap', needs: [], required: false, action: { kind: 'require_capability', capability: 'gpu' } },
    ],
  });
  const fresh = join(s.root, 'fresh-collector');
  const before = storeRows(s.dataDir);
  const unchanged = (what: string): void => {
    assert.equal(storeRows(s.dataDir), before, `${what} changed the store`);
    assert.equal(existsSync(fresh), false, `${what} created the state directory`);
  };

  refused(await add(s, fresh, ['--step', 'nope', ...RUNTIME]), 'COLLECTOR_SETUP_STEP_NOT_FOUND', 2);
  unchanged('an unknown step');
  refused(await add(s, fresh, ['--step', 'cap', ...RUNTIME]), 'COLLECTOR_SETUP_STEP_NOT_COMMAND', 2);
  unchanged('a capability step');
  refused(await add(s, fresh, ['--step', 'check', '--target', 'release', ...RUNTIME]), 'TARGET_NOT_FOUND', 2);
  unchanged('an unknown target');
  const noEngine = ['--docker', RUNTIME[1], '--docker-socket', join(s.root, 'no-engine.sock')];
  refused(await add(s, fresh, ['--step', 'check', ...noEngine]), 'RUNTIME_UNAVAILABLE', 4);
  unchanged('no engine');
  const emptyBin = join(s.root, 'empty-bin');
  mkdirSync(emptyBin);
  refused(
    await add(s, fresh, ['--step', 'check', '--docker-socket', RUNTIME[3]], { PATH: emptyBin }),
    'RUNTIME_FLAGS_INVALID',
    2,
  );
  unchanged('no docker on PATH');
  refused(await add(s, fresh, ['--step', 'check', '--executor', 'x'.repeat(129), ...RUNTIME]), 'ID_INVALID', 2);
  unchanged('a 129-character executor id');

  refused(await add(s, join(s.ws, 'keys'), ['--step', 'check', ...RUNTIME]), 'KEY_STATE_DIR_IN_WORKSPACE', 2);
  assert.equal(existsSync(join(s.ws, 'keys')), false);
  refused(await add(s, join(s.dataDir, 'keys'), ['--step', 'check', ...RUNTIME]), 'COLLECT_STATE_UNSAFE', 2);
  assert.equal(existsSync(join(s.dataDir, 'keys')), false);
  const open = join(s.root, 'open-collector');
  mkdirSync(open);
  chmodSync(open, 0o755);
  refused(await add(s, open, ['--step', 'check', ...RUNTIME]), 'KEY_PERMISSIONS', 2);
  assert.equal(existsSync(join(open, 'signing-key.json')), false);
  unchanged('the unsafe state directories');

  // At the bound: a 128-character executor id is enrolled as given.
  const executor = 'x'.repeat(128);
  const done = await add(s, fresh, ['--step', 'check', '--executor', executor, ...RUNTIME]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(jsonOf<{ registration: { executor_id: string } }>(done).registration.executor_id, executor);
});

test('collector add refuses a target with no requirement, then a recipe image the engine lacks', async (t) => {
  // The recipe names an image the engine does not have; agentscm never pulls one.
  const recipe = { ...scenarioRecipe(['true']), image: 'local/absent-image:1' };
  const s = await buildScenario(t, {
    enrollStep: null,
    requirement: false,
    files: { [SCENARIO_RECIPE]: JSON.stringify(recipe) },
  });
  const fresh = join(s.root, 'fresh-collector');
  const before = storeRows(s.dataDir);
  refused(await add(s, fresh, ['--step', 'check', ...RUNTIME]), 'REQUIREMENT_NOT_FOUND', 2);
  assert.equal(storeRows(s.dataDir), before);
  assert.equal(existsSync(fresh), false);
  const installed = await s.cli(['requirement', 'install', '--target', 'main', s.workflowFile]);
  assert.equal(installed.code, 0, installed.stderr);
  const withRequirement = storeRows(s.dataDir);
  refused(await add(s, fresh, ['--step', 'check', ...RUNTIME]), 'IMAGE_NOT_FOUND', 4);
  assert.equal(storeRows(s.dataDir), withRequirement);
  assert.equal(existsSync(fresh), false);
});
