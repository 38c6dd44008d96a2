/**
 * docs/skill-workflows.md "Running a target's requirement on a Change": `skill-workflow run
 * --change C` compiles main's installed requirement for C's current version and context and runs
 * it in a real container; the default run ID reopens the same run; a new checkpoint binds the new
 * version; the FILE form is unchanged; `agent-task claim` takes the current context by default.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { defaultChangeRunId, RUN_ID_MAX_LENGTH } from '../../src/workflows/change-run.js';
import { jsonOf } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE } from '../helpers/scenario.js';
import { requireEngine } from '../support/collector.js';
import { RUNTIME_FLAGS } from '../support/runtime.js';

before(async () => {
  await requireEngine();
});

interface RunJson {
  run_id: string;
  state: string;
  executed: number;
  subject?: { change_version: number; revision: string; context_digest: string; run_id: string; plan_digest: string };
}

test('the default run ID fits 128 characters: at the bound as is, one past it the Change ID is cut', () => {
  const digest = 'ab'.repeat(32);
  const suffix = '-v7-abababababab';
  const fits = 'c'.repeat(RUN_ID_MAX_LENGTH - suffix.length);
  assert.equal(defaultChangeRunId(fits, 7n, digest), `${fits}${suffix}`);
  assert.equal(defaultChangeRunId(fits, 7n, digest).length, RUN_ID_MAX_LENGTH);
  const past = `${fits}d`;
  assert.equal(defaultChangeRunId(past, 7n, digest), `${fits}${suffix}`);
  assert.equal(defaultChangeRunId('c1', 2n, digest), 'c1-v2-abababababab');
});

test('run --change runs the requirement on the current version; a new checkpoint binds the new one', async (t) => {
  const s = await buildScenario(t, { profile: true });
  // The FILE form, unchanged: the hand-bound definition of version 1.
  const file = await s.cli(['skill-workflow', 'run', 'r-file', s.workflowFile, ...RUNTIME_FLAGS, '--json']);
  assert.equal(file.code, 0, file.stderr);
  assert.equal(jsonOf<RunJson>(file).state, 'completed');
  assert.equal(jsonOf<RunJson>(file).subject, undefined);

  // A FILE and --change exclude each other; FILE alone needs its RUN_ID.
  const both = await s.cli(['skill-workflow', 'run', '--change', SCENARIO_CHANGE, 'r2', s.workflowFile]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^error\[USAGE\]: a definition FILE and --change exclude each other/);

  const first = await s.cli(['skill-workflow', 'run', '--change', SCENARIO_CHANGE, ...RUNTIME_FLAGS, '--json']);
  assert.equal(first.code, 0, first.stderr);
  const v1 = jsonOf<RunJson>(first);
  assert.equal(v1.state, 'completed');
  assert.ok(v1.subject !== undefined);
  assert.equal(v1.subject.change_version, 1);
  assert.equal(v1.subject.context_digest, s.contextDigest);
  assert.equal(v1.run_id, `c1-v1-${v1.subject.plan_digest.slice(0, 12)}`);
  assert.equal(v1.subject.run_id, v1.run_id);

  // Running again reopens the same run: nothing runs twice.
  const again = await s.cli(['skill-workflow', 'run', '--change', SCENARIO_CHANGE, ...RUNTIME_FLAGS]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^run ${v1.run_id}: requirement [0-9a-f]{12} of target main on Change c1 `));

  // A new version: checkpoint makes its context, and the run binds it (the claim too, by default).
  writeFileSync(join(s.ws, 'src/a.txt'), 'edited again\n');
  const cp = await s.cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', s.ws]);
  assert.equal(cp.code, 0, cp.stderr);
  const context = /^context ([0-9a-f]{64}) \(step check, /m.exec(cp.stdout)?.[1];
  assert.ok(context !== undefined, cp.stdout);
  const second = await s.cli(['skill-workflow', 'run', '--change', SCENARIO_CHANGE, ...RUNTIME_FLAGS, '--json']);
  assert.equal(second.code, 0, second.stderr);
  const v2 = jsonOf<RunJson>(second);
  assert.equal(v2.state, 'completed');
  assert.equal(v2.subject?.change_version, 2);
  assert.equal(v2.subject.context_digest, context);
  assert.notEqual(v2.subject.revision, s.revision);
  assert.match(v2.run_id, /^c1-v2-[0-9a-f]{12}$/);

  const out = join(s.root, 'claim.descriptor.json');
  const claim = await s.cli([
    'agent-task',
    'claim',
    '--profile',
    s.profileId ?? '',
    '--change',
    SCENARIO_CHANGE,
    '--token-file',
    s.tokenFile,
    '--out',
    out,
    '--json',
  ]);
  assert.equal(claim.code, 0, claim.stderr);
  const descriptor = jsonOf<{ descriptor: { subject: { context_digest: string; change_version: number } } }>(
    claim,
  ).descriptor;
  assert.deepEqual(descriptor.subject, { ...descriptor.subject, context_digest: context, change_version: 2 });
});
