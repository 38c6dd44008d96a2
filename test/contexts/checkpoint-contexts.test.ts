/**
 * docs/workspace.md "Contexts of the new version": a checkpoint creates the review context the
 * target's installed requirement needs for the new version and prints it; no requirement (or no
 * command step) prints none; a failure keeps the checkpoint and exits non-zero with the fix. A
 * `--context` left out is the Change's only current context, or among several the one of the
 * requirement's first command step; several of which none is that are CONTEXT_AMBIGUOUS, listed
 * (docs/workspace.md "The current context").
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { createReviewContext } from '../../src/native/review-contexts.js';
import { openStore } from '../../src/tasks/store.js';
import { jsonOf } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE, SCENARIO_RECIPE, scenarioRecipe } from '../helpers/scenario.js';

interface CheckpointJson {
  version: number;
  created: boolean;
  target: string;
  requirement_digest: string | null;
  contexts: { context_digest: string; recipe_path: string; steps: string[]; created: boolean }[];
  context_error: { code: string; message: string; hint: string } | null;
}

const CONTEXT_LINE = /^context ([0-9a-f]{64}) \(step check, recipe skills\/check\/runner\.json\)$/m;

test('a checkpoint under a requirement with a command step creates and prints the context', async (t) => {
  const s = await buildScenario(t, { enrollStep: null });
  writeFileSync(join(s.ws, 'src/a.txt'), 'edited twice\n');
  const human = await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws]);
  assert.equal(human.code, 0, human.stderr);
  const revision = /^Change c1 version 2: revision ([0-9a-f]{64})$/m.exec(human.stdout)?.[1];
  assert.ok(revision !== undefined, human.stdout);
  const printed = CONTEXT_LINE.exec(human.stdout)?.[1];
  assert.ok(printed !== undefined, human.stdout);
  assert.notEqual(printed, s.contextDigest, 'the new version has a context of its own');

  // `context create` with the same recipe finds the same context.
  const same = jsonOf<{ context_digest: string; created: boolean }>(
    await s.cli(['context', 'create', '--change', SCENARIO_CHANGE, '--runner', SCENARIO_RECIPE, '--json']),
  );
  assert.deepEqual(same, { ...same, context_digest: printed, created: false });

  // An unchanged tree: no new version, the same context found again (idempotent), in --json too.
  const again = await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws, '--json']);
  assert.equal(again.code, 0, again.stderr);
  const json = jsonOf<CheckpointJson>(again);
  assert.equal(json.created, false);
  assert.equal(json.target, 'main');
  assert.equal(json.requirement_digest, s.requirementDigest);
  assert.deepEqual(json.contexts, [
    { context_digest: printed, recipe_path: SCENARIO_RECIPE, steps: ['check'], created: false },
  ]);
  assert.equal(json.context_error, null);

  // The operator's commands pick it without --context: the current subject (not qualified yet: exit 1).
  const qualification = await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']);
  assert.equal(qualification.code, 1, qualification.stderr);
  const answer = jsonOf<{ subject_current: boolean; revision: string }>(qualification);
  assert.deepEqual([answer.subject_current, answer.revision], [true, revision]);
  const next = await s.cli(['agent-task', 'call', 'next', '--token-file', s.tokenFile, '--change', SCENARIO_CHANGE]);
  assert.equal(next.code, 0, next.stderr);
  assert.match(next.stdout, new RegExp(printed));
});

test('a checkpoint without a requirement prints no context and --json says contexts: []', async (t) => {
  const s = await buildScenario(t, { enrollStep: null, requirement: false });
  writeFileSync(join(s.ws, 'src/a.txt'), 'edited twice\n');
  const human = await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws]);
  assert.equal(human.code, 0, human.stderr);
  assert.doesNotMatch(human.stdout, /^context /m);
  assert.equal(human.stderr, '');
  const json = jsonOf<CheckpointJson>(
    await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws, '--json']),
  );
  assert.deepEqual(json.contexts, []);
  assert.equal(json.requirement_digest, null);
  assert.equal(json.context_error, null);
});

test('a context that cannot be created keeps the checkpoint, says the fix and exits non-zero', async (t) => {
  const s = await buildScenario(t, { enrollStep: null });
  // The new version drops the recipe its requirement runs.
  rmSync(join(s.ws, SCENARIO_RECIPE));
  const failed = await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws, '--json']);
  assert.notEqual(failed.code, 0);
  assert.match(failed.stderr, /^error\[[A-Z_]+\]: the checkpoint is recorded, but the review contexts of target main/m);
  assert.match(failed.stderr, /run `agentscm checkpoint --change c1 --target main` again/);
  assert.match(failed.stderr, /`agentscm context create --change c1 --runner PATH`/);
  const json = jsonOf<CheckpointJson>(failed);
  assert.equal(json.version, 2);
  assert.deepEqual(json.contexts, []);
  assert.ok(json.context_error !== null);
  const shown = jsonOf<{ current_version: number }>(await s.cli(['change', 'show', SCENARIO_CHANGE, '--json']));
  assert.equal(shown.current_version, 2, 'the checkpoint stays');

  // A target the repository does not have is named, not taken for "no requirement".
  const unknown = await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws, '--target', 'nope']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^error\[TARGET_NOT_FOUND\]: the checkpoint is recorded, .*target "nope"/m);
});

test('a context made by hand for another recipe: a left-out --context is still the subject context', async (t) => {
  const second = 'skills/check/runner2.json';
  const s = await buildScenario(t, {
    enrollStep: null,
    files: { [second]: JSON.stringify(scenarioRecipe(['/bin/true'])) },
  });
  const other = jsonOf<{ context_digest: string }>(
    await s.cli(['context', 'create', '--change', SCENARIO_CHANGE, '--runner', second, '--json']),
  );
  assert.notEqual(other.context_digest, s.contextDigest);
  // The requirement's first command step runs SCENARIO_RECIPE: its context is the subject's.
  const plan = await s.cli(['skill-workflow', 'plan', '--change', SCENARIO_CHANGE, '--json']);
  assert.equal(plan.code, 0, plan.stderr);
  assert.equal(jsonOf<{ subject: { context_digest: string } }>(plan).subject.context_digest, s.contextDigest);
  const next = await s.cli(['agent-task', 'call', 'next', '--token-file', s.tokenFile, '--change', SCENARIO_CHANGE]);
  assert.equal(next.code, 0, next.stderr);
  const qualification = await s.cli(['qualification', '--change', SCENARIO_CHANGE]);
  assert.equal(qualification.code, 1, qualification.stderr);
  assert.doesNotMatch(qualification.stderr, /error\[/);
  assert.match(qualification.stdout, /not qualified/);
  // Naming the other one is a subject whose first command step's recipe differs.
  const named = await s.cli([
    'qualification',
    '--change',
    SCENARIO_CHANGE,
    '--context',
    other.context_digest.slice(0, 12),
  ]);
  assert.equal(named.code, 2, named.stderr);
  assert.match(named.stderr, /^error\[CONTEXT_MISMATCH\]/);
});

test('CONTEXT_AMBIGUOUS lists at most 8 contexts: 8 all listed, 9 listed as 8 and 1 more', async (t) => {
  const extra = Array.from({ length: 8 }, (_, i) => `skills/check/runner-${i}.json`);
  const s = await buildScenario(t, {
    enrollStep: null,
    requirement: false,
    files: Object.fromEntries(extra.map((path, i) => [path, JSON.stringify(scenarioRecipe([`/bin/echo ${i}`]))])),
  });
  const create = (paths: readonly string[]): void => {
    const store = openStore(s.dataDir, { mode: 'write' });
    try {
      for (const path of paths) {
        createReviewContext(store.authority(), {
          repository: s.repository,
          changeId: SCENARIO_CHANGE,
          runnerPath: path,
        });
      }
    } finally {
      store.close();
    }
  };
  create(extra.slice(0, 7)); // with the scenario's own: 8
  const eight = await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']);
  assert.equal(eight.code, 2, eight.stderr);
  assert.match(eight.stderr, /has 8 review contexts/);
  assert.equal(eight.stderr.match(/[0-9a-f]{64} \(recipe /g)?.length, 8);
  assert.doesNotMatch(eight.stderr, /more;/);
  const details = jsonOf<{ error: { details: { contexts: unknown[] } } }>(eight).error.details;
  assert.equal(details.contexts.length, 8);
  create(extra.slice(7));
  const nine = await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']);
  assert.match(nine.stderr, /has 9 review contexts/);
  assert.equal(nine.stderr.match(/[0-9a-f]{64} \(recipe /g)?.length, 8);
  assert.match(nine.stderr, / and 1 more; pass --context/);
  assert.equal(jsonOf<{ error: { details: { contexts: unknown[] } } }>(nine).error.details.contexts.length, 9);
});
