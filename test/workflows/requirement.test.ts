/**
 * Target workflow requirements: install and show through the CLI, idempotent reinstall, and
 * the compile entry points the agent-task state machine uses for a subject revision.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { getTargetRequirement } from '../../src/native/requirements.js';
import { openAuthority } from '../../src/native/store.js';
import {
  bindDefinitionToSubject,
  compileRequirementByDigest,
  compileTargetRequirement,
  requirementDefinition,
  requirementSteps,
} from '../../src/workflows/requirement.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  addChangeVersion,
  addRevision,
  bumpPolicy,
  commandAction,
  definition,
  makeCommandBinding,
  makeStore,
  RECIPE,
  RECIPE_PATH,
  SKILL_PATH,
  SKILL_TEXT,
  sourcePaths,
  writeDefinition,
} from '../support/workflows.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

test('requirement install prints the requirement digest (the plan digest); reinstall is unchanged; show reads it back', async (t) => {
  const dir = tempDir(t);
  const store = makeStore(join(dir, 'data'), { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha', 'b.txt': 'beta' });
  const file = writeDefinition(
    dir,
    'wf.json',
    definition(store, [
      { id: 'second', needs: ['first'], action: sourcePaths(store, ['b.txt']) },
      { id: 'first', action: sourcePaths(store, ['a.txt']) },
    ]),
  );
  const missing = await runCli(['--data-dir', store.dataDir, 'requirement', 'show', '--target', 'main', '--json']);
  assert.equal(missing.code, 2);
  assert.equal(jsonOf<Loose>(missing).error.code, 'REQUIREMENT_NOT_FOUND');

  const plan = jsonOf<Loose>(await runCli(['--data-dir', store.dataDir, 'skill-workflow', 'plan', file, '--json']));
  const install = await runCli(['--data-dir', store.dataDir, 'requirement', 'install', '--target', 'main', file]);
  assert.equal(install.code, 0, install.stderr);
  assert.match(install.stdout, new RegExp(`^requirement_digest: ${plan.plan_digest as string}$`, 'm'));
  const again = jsonOf<Loose>(
    await runCli(['--data-dir', store.dataDir, 'requirement', 'install', '--target', 'main', file, '--json']),
  );
  assert.equal(again.requirement_digest, plan.plan_digest);
  assert.equal(again.changed, false);

  const show = await runCli(['--data-dir', store.dataDir, 'requirement', 'show', '--target', 'main', '--json']);
  assert.equal(show.code, 0, show.stderr);
  const view = jsonOf<Loose>(show);
  assert.equal(view.requirement_digest, plan.plan_digest);
  assert.equal(view.target, 'main');
  assert.deepEqual(
    view.steps.map((s: Loose) => String(s.id)),
    ['first', 'second'],
  );
  assert.equal(view.definition.steps[0].id, 'second', 'the retained definition keeps declared order');

  const noTarget = await runCli(['--data-dir', store.dataDir, 'requirement', 'install', '--target', 'release', file]);
  assert.equal(noTarget.code, 2);
  assert.match(noTarget.stderr, /^error\[TARGET_NOT_FOUND\]/);
  const invalid = writeDefinition(dir, 'bad.json', {
    ...definition(store, [{ id: 'x', action: sourcePaths(store, ['a.txt']) }]),
    extra: true,
  });
  const refused = await runCli(['--data-dir', store.dataDir, 'requirement', 'install', '--target', 'main', invalid]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^error\[SCHEMA_UNKNOWN_FIELD\]/);
  assert.equal(
    jsonOf<Loose>(await runCli(['--data-dir', store.dataDir, 'requirement', 'show', '--target', 'main', '--json']))
      .requirement_digest,
    plan.plan_digest,
  );
});

test('an installed requirement compiles for a later subject revision with the same skill; a changed skill or policy is refused', (t) => {
  const store = makeStore(join(tempDir(t), 'data'), { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha', 'b.txt': 'beta' });
  const file = writeDefinition(
    tempDir(t),
    'wf.json',
    definition(store, [
      { id: 'pinned', action: sourcePaths(store, ['a.txt']) },
      { id: 'other', required: false, action: sourcePaths(store, ['b.txt']) },
    ]),
  );
  return runCli(['--data-dir', store.dataDir, 'requirement', 'install', '--target', 'main', file]).then((install) => {
    assert.equal(install.code, 0, install.stderr);
    const next = addRevision(
      store.dataDir,
      store.repository,
      { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha', 'b.txt': 'beta changed' },
      store.revision,
    );
    const skillChanged = addRevision(
      store.dataDir,
      store.repository,
      { [SKILL_PATH]: `${SKILL_TEXT}more\n`, 'a.txt': 'alpha', 'b.txt': 'beta' },
      next.revision,
    );
    const auth = openAuthority(store.dataDir, { mode: 'read' });
    try {
      const requirement = getTargetRequirement(auth, store.repository, 'main');
      const compiled = compileTargetRequirement(auth, store.repository, 'main', {
        revision: next.revision,
        policyEpoch: 0n,
      });
      assert.equal(compiled.requirement.requirement_digest, requirement.requirement_digest);
      assert.equal(compiled.plan.source.revision, next.revision);
      assert.notEqual(compiled.plan.digest, requirement.requirement_digest);
      assert.equal(compiled.plan.skill.digest, requirement.skill_digest);
      assert.deepEqual(
        requirementSteps(compiled).map((s) => s.id),
        ['pinned', 'other'],
      );
      const byDigest = compileRequirementByDigest(auth, store.repository, requirement.requirement_digest, {
        revision: next.revision,
        policyEpoch: 0n,
      });
      assert.equal(byDigest.plan.digest, compiled.plan.digest);
      assert.throws(
        () =>
          compileTargetRequirement(auth, store.repository, 'main', {
            revision: skillChanged.revision,
            policyEpoch: 0n,
          }),
        { code: 'WORKFLOW_BINDING_CHANGED' },
      );
      assert.throws(
        () => compileTargetRequirement(auth, store.repository, 'main', { revision: next.revision, policyEpoch: 1n }),
        { code: 'WORKFLOW_POLICY_STALE' },
      );
      assert.throws(
        () =>
          compileRequirementByDigest(auth, store.repository, 'c'.repeat(64), {
            revision: next.revision,
            policyEpoch: 0n,
          }),
        { code: 'REQUIREMENT_NOT_FOUND' },
      );
    } finally {
      auth.close();
    }
    bumpPolicy(store.dataDir, store.repository);
    const after = openAuthority(store.dataDir, { mode: 'read' });
    try {
      compileTargetRequirement(after, store.repository, 'main', { revision: next.revision, policyEpoch: 1n });
    } finally {
      after.close();
    }
  });
});

test('a requirement with a command step binds the subject Change version and context', async (t) => {
  const store = makeStore(join(tempDir(t), 'data'), {
    [SKILL_PATH]: SKILL_TEXT,
    'a.txt': 'alpha',
    [RECIPE_PATH]: JSON.stringify(RECIPE),
  });
  const binding = await makeCommandBinding(store);
  const file = writeDefinition(
    tempDir(t),
    'wf.json',
    definition(store, [{ id: 'test', action: commandAction(store, binding) }], { resources: [RECIPE_PATH] }),
  );
  const install = await runCli(['--data-dir', store.dataDir, 'requirement', 'install', '--target', 'main', file]);
  assert.equal(install.code, 0, install.stderr);
  // A second version of the Change at a new revision, with its own context.
  const next = addRevision(
    store.dataDir,
    store.repository,
    { [SKILL_PATH]: SKILL_TEXT, 'a.txt': 'alpha 2', [RECIPE_PATH]: JSON.stringify(RECIPE) },
    store.revision,
  );
  addChangeVersion(store.dataDir, store.repository, 'change-1', next.revision, 1n);
  const { createReviewContext } = await import('../../src/native/review-contexts.js');
  const write = openAuthority(store.dataDir, { mode: 'write' });
  const context = createReviewContext(write, {
    repository: store.repository,
    changeId: 'change-1',
    runnerPath: RECIPE_PATH,
  });
  write.close();
  const auth = openAuthority(store.dataDir, { mode: 'read' });
  try {
    const requirement = getTargetRequirement(auth, store.repository, 'main');
    assert.throws(
      () => bindDefinitionToSubject(requirementDefinition(requirement), { revision: next.revision, policyEpoch: 0n }),
      { code: 'WORKFLOW_COMMAND_INVALID' },
    );
    const compiled = compileTargetRequirement(auth, store.repository, 'main', {
      revision: next.revision,
      policyEpoch: 0n,
      change: { id: 'change-1', version: 2n, contextDigest: context.context_digest },
    });
    const step = requirementSteps(compiled)[0];
    assert.ok(step !== undefined && step.action.kind === 'command');
    assert.equal(step.action.change_version, 2n);
    assert.equal(step.action.context_digest, context.context_digest);
    assert.equal(step.action.recipe_sha256, store.digests[RECIPE_PATH]);
    assert.throws(
      () =>
        compileTargetRequirement(auth, store.repository, 'main', {
          revision: next.revision,
          policyEpoch: 0n,
          change: { id: 'change-1', version: 2n, contextDigest: binding.contextDigest },
        }),
      (error: Loose) => ['CONTEXT_MISMATCH', 'CONTEXT_STALE'].includes(String(error.code)),
    );
  } finally {
    auth.close();
  }
});
