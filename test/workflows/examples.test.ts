/**
 * The shipped example skill and definitions run end to end: the skill package is checkpointed
 * at skills/native-workflow/ of a revision, the placeholders are replaced with the store's
 * identities, and the definitions plan and run with the documented outcomes.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { makeStore, sha256, writeDefinition } from '../support/workflows.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const SKILL_SOURCE = join(REPO_ROOT, 'examples', 'skills', 'native-workflow');
const WORKFLOWS = join(REPO_ROOT, 'examples', 'workflows');

function example(name: string): Loose {
  return JSON.parse(readFileSync(join(WORKFLOWS, name), 'utf8'));
}

test('the example definitions pin the exact bytes of the example skill', () => {
  for (const name of ['verify-native-workflow.json', 'verify-with-omission.json']) {
    const value = example(name);
    for (const expectation of value.steps[0].action.expectations as { path: string; sha256: string }[]) {
      const file = join(SKILL_SOURCE, expectation.path.replace('skills/native-workflow/', ''));
      assert.equal(expectation.sha256, sha256(readFileSync(file)), `${name}: ${expectation.path}`);
    }
  }
});

test('the example definitions plan and run end to end against a store holding the example skill', async (t) => {
  const dir = tempDir(t);
  const store = makeStore(join(dir, 'data'), {
    'skills/native-workflow/SKILL.md': readFileSync(join(SKILL_SOURCE, 'SKILL.md')),
    'skills/native-workflow/checks.md': readFileSync(join(SKILL_SOURCE, 'checks.md')),
    'README.md': '# demo\n',
  });
  const expected: Record<string, string> = {
    'verify-native-workflow.json': 'completed',
    'verify-with-omission.json': 'completed_with_omissions',
  };
  for (const [name, state] of Object.entries(expected)) {
    const value = example(name);
    value.source.repository = store.repository;
    value.source.revision = store.revision;
    const file = writeDefinition(dir, name, value);
    const plan = await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'plan', file, '--json']);
    assert.equal(plan.code, 0, plan.stderr);
    const run = await runCli([
      '--data-dir',
      store.dataDir,
      'skill-workflow',
      'run',
      name.replace('.json', ''),
      file,
      '--json',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const report = jsonOf<Loose>(run);
    assert.equal(report.state, state, name);
    assert.equal(report.plan_digest, jsonOf<Loose>(plan).plan_digest);
  }
});

// Not buildScenario: this test replays the documented quickstart, set-up included.
test('the documented quickstart fragment: the example skill in a project, init-repo, plan, run, requirement install', async (t) => {
  const dir = tempDir(t);
  const work = join(dir, 'work');
  const data = join(dir, 'data');
  mkdirSync(join(work, 'skills'), { recursive: true });
  writeFileSync(join(work, 'main.py'), 'print("hello")\n');
  cpSync(SKILL_SOURCE, join(work, 'skills', 'native-workflow'), { recursive: true });
  const init = await runCli(['--data-dir', data, 'init-repo', work, '--name', 'demo', '--json']);
  assert.equal(init.code, 0, init.stderr);
  const { repository, revision } = jsonOf<{ repository: string; revision: string }>(init);
  const value = example('verify-with-omission.json');
  value.source.repository = repository;
  value.source.revision = revision;
  const file = writeDefinition(dir, 'workflow.json', value);
  const run = await runCli(['--data-dir', data, 'skill-workflow', 'run', 'demo-run-1', file, '--json']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(jsonOf<Loose>(run).state, 'completed_with_omissions');
  const install = await runCli(['--data-dir', data, 'requirement', 'install', '--target', 'main', file, '--json']);
  assert.equal(install.code, 0, install.stderr);
  assert.equal(jsonOf<Loose>(install).requirement_digest, jsonOf<Loose>(run).plan_digest);
});
