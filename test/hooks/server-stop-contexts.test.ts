/**
 * The server-executed Stop hook creates the review contexts of the version it checkpoints exactly
 * as `agentscm checkpoint` does (docs/stop-hooks.md "Server-executed mode", docs/workspace.md
 * "Contexts of the new version"): one per distinct recipe path of the requirement's command
 * steps, so a checkpoint of the unchanged tree afterwards finds every one of them (none created).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf } from '../helpers/cli.js';
import {
  buildScenario,
  commandStepAction,
  SCENARIO_CHANGE,
  SCENARIO_RECIPE,
  scenarioRecipe,
} from '../helpers/scenario.js';
import { noDockerOnPath } from '../support/runtime.js';

const LINT_RECIPE = 'skills/check/lint.json';

interface Checkpointed {
  readonly version: number;
  readonly contexts: { context_digest: string; recipe_path: string; steps: string[]; created: boolean }[];
}

test('a Stop creates the context of every command step; checkpoint then finds them all', async (t) => {
  const s = await buildScenario(t, {
    files: { [LINT_RECIPE]: JSON.stringify(scenarioRecipe(['true'])) },
    resources: [LINT_RECIPE],
    enrollStep: null,
    requirement: false,
  });
  // Two command steps with two recipes: the second needs a context of its own.
  const lint = jsonOf<{ context_digest: string }>(
    await s.cli(['context', 'create', '--change', SCENARIO_CHANGE, '--runner', LINT_RECIPE, '--json']),
  ).context_digest;
  const workflow = JSON.parse(readFileSync(s.workflowFile, 'utf8')) as Record<string, unknown>;
  workflow.steps = [
    { id: 'check', needs: [], required: true, action: commandStepAction(s) },
    {
      id: 'lint',
      needs: [],
      required: true,
      action: { ...commandStepAction(s), runner: 'lint.json', context_digest: lint },
    },
  ];
  writeFileSync(s.workflowFile, JSON.stringify(workflow));
  const installed = await s.cli(['requirement', 'install', '--target', 'main', s.workflowFile]);
  assert.equal(installed.code, 0, installed.stderr);

  writeFileSync(join(s.ws, 'src/a.txt'), 'edited again\n');
  // No docker on PATH and no --docker: the Stop checkpoints and creates the contexts, then blocks
  // before any command runs.
  const stop = await s.cli(['skill-workflow', 'stop', SCENARIO_CHANGE, '--workspace', s.ws], {
    input: JSON.stringify({ session_id: 's', transcript_path: null, cwd: s.ws, hook_event_name: 'Stop' }),
    env: noDockerOnPath(s.root),
  });
  assert.equal(stop.code, 0, stop.stderr);
  assert.equal((JSON.parse(stop.stdout) as { decision: string }).decision, 'block');

  const again = jsonOf<Checkpointed>(
    await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws, '--json']),
  );
  assert.equal(
    again.version,
    s.changeVersion + 1,
    'the Stop checkpointed the edit; the unchanged tree makes no version',
  );
  assert.deepEqual(
    again.contexts.map((c) => [c.recipe_path, c.steps, c.created]),
    [
      [SCENARIO_RECIPE, ['check'], false],
      [LINT_RECIPE, ['lint'], false],
    ],
    'the Stop created both contexts of the new version',
  );
});
