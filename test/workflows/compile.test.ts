/**
 * Compilation against a real native store: repository, revision, policy epoch, the packaged
 * skill read from the revision, plan and skill identities, and command-step bindings.
 */
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';

import { decodeWorkflowDefinition } from '../../src/contracts/workflow-definition.js';
import { openAuthority } from '../../src/native/store.js';
import { compileWorkflow, type CompiledPlan } from '../../src/workflows/plan.js';
import { skillPackageDigest } from '../../src/workflows/skill-package.js';
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
  SKILL_DIR,
  SKILL_PATH,
  SKILL_TEXT,
  sourcePaths,
  type Store,
} from '../support/workflows.js';

// Fixtures mutate nested JSON and inspect thrown errors freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

function compile(store: Store, value: unknown): CompiledPlan {
  const auth = openAuthority(store.dataDir, { mode: 'read' });
  try {
    return compileWorkflow(auth, decodeWorkflowDefinition(Buffer.from(JSON.stringify(value))));
  } finally {
    auth.close();
  }
}

function store(t: TestContext, extra: Record<string, Parameters<typeof makeStore>[1][string]> = {}): Store {
  return makeStore(tempDir(t), {
    [SKILL_PATH]: SKILL_TEXT,
    'a.txt': 'alpha',
    [`${SKILL_DIR}/notes.md`]: 'notes',
    [`${SKILL_DIR}/sub/deep.md`]: 'deep',
    ...extra,
  });
}

test('a valid definition compiles; identities are stable and follow the packaged bytes', (t) => {
  const s = store(t);
  const value = definition(s, [{ id: 'one', action: sourcePaths(s, ['a.txt']) }], {
    resources: [`${SKILL_DIR}/notes.md`, `${SKILL_DIR}/sub/deep.md`],
  });
  const plan = compile(s, value);
  assert.match(plan.digest, /^[0-9a-f]{64}$/);
  assert.equal(compile(s, value).digest, plan.digest);
  assert.deepEqual(
    plan.skill.entries.map((e) => e.path),
    [SKILL_PATH, `${SKILL_DIR}/notes.md`, `${SKILL_DIR}/sub/deep.md`],
  );
  assert.equal(plan.skill.digest, skillPackageDigest(SKILL_PATH, plan.skill.entries));
  // Declaring the resources in another order is the same package.
  const reordered = definition(s, [{ id: 'one', action: sourcePaths(s, ['a.txt']) }], {
    resources: [`${SKILL_DIR}/sub/deep.md`, `${SKILL_DIR}/notes.md`],
  });
  assert.equal(compile(s, reordered).skill.digest, plan.skill.digest);
  // Different skill bytes at a new revision: a different skill and plan identity.
  const next = addRevision(
    s.dataDir,
    s.repository,
    {
      [SKILL_PATH]: `${SKILL_TEXT}\nchanged\n`,
      'a.txt': 'alpha',
      [`${SKILL_DIR}/notes.md`]: 'notes',
      [`${SKILL_DIR}/sub/deep.md`]: 'deep',
    },
    s.revision,
  );
  const moved = compile(
    { ...s, revision: next.revision },
    { ...value, source: { repository: s.repository, revision: next.revision, policy_epoch: 0 } },
  );
  assert.notEqual(moved.skill.digest, plan.skill.digest);
  assert.notEqual(moved.digest, plan.digest);
  // A different expectation is a different plan with the same skill.
  const other = compile(
    s,
    definition(s, [{ id: 'one', action: sourcePaths(s, ['a.txt'], { 'a.txt': 'f'.repeat(64) }) }], {
      resources: [`${SKILL_DIR}/notes.md`, `${SKILL_DIR}/sub/deep.md`],
    }),
  );
  assert.notEqual(other.digest, plan.digest);
});

test('unknown repository, unknown revision and a stale policy epoch are refused', (t) => {
  const s = store(t);
  const value = definition(s, [{ id: 'one', action: sourcePaths(s, ['a.txt']) }]);
  assert.throws(
    () => compile(s, { ...value, source: { repository: 'f'.repeat(32), revision: s.revision, policy_epoch: 0 } }),
    { code: 'REPOSITORY_NOT_FOUND' },
  );
  assert.throws(
    () => compile(s, { ...value, source: { repository: s.repository, revision: 'e'.repeat(64), policy_epoch: 0 } }),
    { code: 'REVISION_NOT_FOUND' },
  );
  assert.throws(
    () => compile(s, { ...value, source: { repository: s.repository, revision: s.revision, policy_epoch: 1 } }),
    { code: 'WORKFLOW_POLICY_STALE' },
  );
  bumpPolicy(s.dataDir, s.repository);
  assert.throws(() => compile(s, value), { code: 'WORKFLOW_POLICY_STALE' });
  compile(s, { ...value, source: { repository: s.repository, revision: s.revision, policy_epoch: 1 } });
});

test('skill package rules: SKILL.md name, resources within its directory, present, regular files, no duplicates', (t) => {
  const s = store(t, {
    [`${SKILL_DIR}/link.md`]: { bytes: 'notes.md', mode: 'symlink' },
    'skills/other/x.md': 'x',
    [`${SKILL_DIR}/tool.sh`]: { bytes: '#!/bin/sh\n', mode: 'executable' },
  });
  const step = [{ id: 'one', action: sourcePaths(s, ['a.txt']) }];
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ entrypoint: `${SKILL_DIR}/skill.md` }, 'WORKFLOW_SKILL_INVALID', /exactly SKILL\.md/],
    [{ resources: ['skills/other/x.md'] }, 'WORKFLOW_SKILL_INVALID', /not within the skill directory/],
    [{ resources: [`${SKILL_DIR}/missing.md`] }, 'WORKFLOW_SKILL_INVALID', /does not exist/],
    [{ resources: [`${SKILL_DIR}/link.md`] }, 'WORKFLOW_SKILL_INVALID', /symlink, not a regular file/],
    [{ resources: [`${SKILL_DIR}/notes.md`, `${SKILL_DIR}/notes.md`] }, 'WORKFLOW_SKILL_INVALID', /declared twice/],
    [{ resources: [SKILL_PATH] }, 'WORKFLOW_SKILL_INVALID', /included automatically/],
    [{ entrypoint: 'skills/absent/SKILL.md' }, 'WORKFLOW_SKILL_INVALID', /does not exist/],
  ];
  for (const [extra, code, message] of cases) {
    assert.throws(
      () => compile(s, definition(s, step, extra)),
      (error: Loose) => error.code === code && message.test(error.message),
      JSON.stringify(extra),
    );
  }
  // An executable file is a regular file.
  compile(s, definition(s, step, { resources: [`${SKILL_DIR}/tool.sh`] }));
});

test('64 resources are refused before any source access (even for an unknown revision)', (t) => {
  const s = store(t);
  const value = definition(s, [{ id: 'one', action: sourcePaths(s, ['a.txt']) }], {
    resources: Array.from({ length: 64 }, (_, i) => `${SKILL_DIR}/r${i}`),
  });
  (value.source as Record<string, unknown>).revision = 'e'.repeat(64);
  assert.throws(() => compile(s, value), { code: 'SCHEMA_BOUND' });
});

test('a skill file above 1 MiB is refused from its stored size', (t) => {
  const s = store(t, {
    [`${SKILL_DIR}/big.bin`]: Buffer.alloc(1024 * 1024 + 1, 1),
    [`${SKILL_DIR}/max.bin`]: Buffer.alloc(1024 * 1024, 2),
  });
  const step = [{ id: 'one', action: sourcePaths(s, ['a.txt']) }];
  compile(s, definition(s, step, { resources: [`${SKILL_DIR}/max.bin`] }));
  assert.throws(() => compile(s, definition(s, step, { resources: [`${SKILL_DIR}/big.bin`] })), {
    code: 'INPUT_TOO_LARGE',
  });
});

test('command steps bind a declared recipe, a current Change and a matching review context', async (t) => {
  const s = store(t, { [RECIPE_PATH]: JSON.stringify(RECIPE), [`${SKILL_DIR}/bad.json`]: '{"version":1}' });
  const binding = await makeCommandBinding(s);
  const resources = [RECIPE_PATH];
  const ok = compile(s, definition(s, [{ id: 'cmd', action: commandAction(s, binding) }], { resources }));
  const step = ok.steps[0];
  assert.ok(step !== undefined && step.action.kind === 'command');
  assert.equal(step.action.recipe_path, RECIPE_PATH);
  assert.equal(step.action.recipe_sha256, s.digests[RECIPE_PATH]);

  assert.throws(() => compile(s, definition(s, [{ id: 'cmd', action: commandAction(s, binding) }])), {
    code: 'WORKFLOW_COMMAND_INVALID',
  });
  assert.throws(
    () =>
      compile(
        s,
        definition(s, [{ id: 'cmd', action: { ...commandAction(s, binding), runner: 'bad.json' } }], {
          resources: [`${SKILL_DIR}/bad.json`],
        }),
      ),
    { code: 'WORKFLOW_COMMAND_INVALID' },
  );
  assert.throws(
    () =>
      compile(
        s,
        definition(
          s,
          [
            {
              id: 'cmd',
              action: { ...commandAction(s, binding), change: { repository: 'f'.repeat(32), id: 'change-1' } },
            },
          ],
          { resources },
        ),
      ),
    {
      code: 'WORKFLOW_SOURCE_MISMATCH',
    },
  );
  assert.throws(
    () =>
      compile(s, definition(s, [{ id: 'cmd', action: commandAction(s, binding, 'no-such-change') }], { resources })),
    { code: 'CHANGE_NOT_FOUND' },
  );
  assert.throws(
    () =>
      compile(
        s,
        definition(s, [{ id: 'cmd', action: { ...commandAction(s, binding), change_version: 2 } }], { resources }),
      ),
    { code: 'WORKFLOW_COMMAND_STALE' },
  );
  assert.throws(
    () =>
      compile(
        s,
        definition(s, [{ id: 'cmd', action: { ...commandAction(s, binding), context_digest: 'c'.repeat(64) } }], {
          resources,
        }),
      ),
    { code: 'CONTEXT_NOT_FOUND' },
  );

  // The Change moves on: the old binding is stale.
  addChangeVersion(s.dataDir, s.repository, 'change-1', s.revision, binding.changeVersion);
  assert.throws(() => compile(s, definition(s, [{ id: 'cmd', action: commandAction(s, binding) }], { resources })), {
    code: 'WORKFLOW_COMMAND_STALE',
  });
});

test('a context of another policy epoch does not bind', async (t) => {
  const s = store(t, { [RECIPE_PATH]: JSON.stringify(RECIPE) });
  const binding = await makeCommandBinding(s);
  bumpPolicy(s.dataDir, s.repository);
  assert.throws(
    () =>
      compile(
        s,
        definition(s, [{ id: 'cmd', action: commandAction(s, binding) }], { resources: [RECIPE_PATH], policyEpoch: 1 }),
      ),
    (error: Loose) => ['CONTEXT_MISMATCH', 'CONTEXT_STALE'].includes(error.code),
  );
});

test('the whole skill package: 16 MiB accepted, one byte more refused before reading', (t) => {
  const mib = 1024 * 1024;
  const files: Record<string, Buffer | string> = { [SKILL_PATH]: Buffer.alloc(mib, 0x61), 'a.txt': 'alpha' };
  for (let i = 0; i < 15; i++) files[`${SKILL_DIR}/r${i}.bin`] = Buffer.alloc(mib, i);
  files[`${SKILL_DIR}/extra.bin`] = Buffer.alloc(1, 7);
  const s = makeStore(tempDir(t), files);
  const fifteen = Array.from({ length: 15 }, (_, i) => `${SKILL_DIR}/r${i}.bin`);
  const step = [{ id: 'one', action: sourcePaths(s, ['a.txt']) }];
  const plan = compile(s, definition(s, step, { resources: fifteen }));
  assert.equal(
    plan.skill.entries.reduce((sum, e) => sum + e.size, 0),
    16 * mib,
  );
  assert.throws(() => compile(s, definition(s, step, { resources: [...fifteen, `${SKILL_DIR}/extra.bin`] })), {
    code: 'INPUT_TOO_LARGE',
  });
});
