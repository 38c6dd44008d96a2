import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  assertError,
  cliJson,
  fixture,
  initProject,
  integrityOk,
  makeProject,
  writeTree,
} from '../support/foundation.js';

interface CheckpointJson {
  repository: string;
  change: string;
  version: number;
  revision: string;
  previous_revision: string | null;
  created: boolean;
  generation: number;
  hashed_files: number;
}

interface StatusJson {
  repository: string;
  base_revision: string;
  generation: number;
  clean: boolean;
  complete: boolean;
  ready: boolean;
  changes: { path: string; kind: string }[];
  pending_operation: unknown;
}

test('checkpoint appends versions, status reports changes, and an unchanged tree makes no new version', async (t) => {
  const f = fixture(t);
  const init = await initProject(f);
  const ws = ['--workspace', f.workspace];

  const clean = await cliJson<StatusJson>(f, ['status', ...ws]);
  assert.deepEqual(
    {
      repository: clean.repository,
      base: clean.base_revision,
      generation: clean.generation,
      clean: clean.clean,
      complete: clean.complete,
      ready: clean.ready,
      changes: clean.changes,
    },
    {
      repository: init.repository,
      base: init.revision,
      generation: 1,
      clean: true,
      complete: true,
      ready: true,
      changes: [],
    },
  );

  writeFileSync(join(f.workspace, 'src/main.ts'), 'export const x = 2;\n');
  writeFileSync(join(f.workspace, 'src/new.ts'), 'new\n');
  unlinkSync(join(f.workspace, 'README.md'));
  chmodSync(join(f.workspace, 'bin/run.sh'), 0o644);
  writeFileSync(join(f.workspace, 'more.log'), 'still ignored');
  const dirty = await cliJson<StatusJson>(f, ['status', ...ws]);
  assert.equal(dirty.clean, false);
  assert.equal(dirty.ready, false);
  assert.deepEqual(dirty.changes, [
    { path: 'README.md', kind: 'deleted' },
    { path: 'bin/run.sh', kind: 'modified' },
    { path: 'src/main.ts', kind: 'modified' },
    { path: 'src/new.ts', kind: 'added' },
  ]);

  const v1 = await cliJson<CheckpointJson>(f, ['checkpoint', '--change', 'c1', ...ws]);
  assert.deepEqual(
    {
      repository: v1.repository,
      change: v1.change,
      version: v1.version,
      previous: v1.previous_revision,
      created: v1.created,
      generation: v1.generation,
    },
    { repository: init.repository, change: 'c1', version: 1, previous: init.revision, created: true, generation: 2 },
  );
  assert.notEqual(v1.revision, init.revision);
  const after = await cliJson<StatusJson>(f, ['status', ...ws]);
  assert.equal(after.clean, true);
  assert.equal(after.base_revision, v1.revision);
  assert.equal(after.generation, 2);

  const again = await cliJson<CheckpointJson>(f, ['checkpoint', '--change', 'c1', ...ws]);
  assert.equal(again.created, false);
  assert.equal(again.version, 1);
  assert.equal(again.revision, v1.revision);

  writeFileSync(join(f.workspace, 'src/new.ts'), 'newer\n');
  const v2 = await cliJson<CheckpointJson>(f, ['checkpoint', '--change', 'c1', ...ws]);
  assert.equal(v2.version, 2);
  assert.equal(v2.previous_revision, v1.revision);
  assert.equal(v2.hashed_files, 1, 'the stat cache spares the unchanged files');

  const change = await cliJson<{
    current_version: number;
    versions: { version: number; revision: string; previous_revision: string }[];
  }>(f, ['change', 'show', 'c1']);
  assert.equal(change.current_version, 2);
  assert.deepEqual(
    change.versions.map((v) => [v.version, v.revision, v.previous_revision]),
    [
      [1, v1.revision, init.revision],
      [2, v2.revision, v1.revision],
    ],
  );
  const rev = await cliJson<{ parent: string; entries: { path: string; mode: string }[] }>(f, [
    'revision',
    'show',
    v2.revision,
  ]);
  assert.equal(rev.parent, v1.revision);
  assert.ok(rev.entries.some((e) => e.path === 'bin/run.sh' && e.mode === 'file'));
  assert.ok(!rev.entries.some((e) => e.path === 'README.md'));

  // A second Change from the same workspace starts at the current base.
  const other = await cliJson<CheckpointJson>(f, ['checkpoint', '--change', 'c2', ...ws]);
  assert.deepEqual(
    [other.version, other.revision, other.previous_revision, other.created],
    [1, v2.revision, v2.revision, true],
  );
  integrityOk(f.dataDir);
});

test('a touched but unchanged file is not a change; --full rehashes everything and finds the same tree', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const future = new Date(Date.now() + 60_000);
  utimesSync(join(f.workspace, 'src/main.ts'), future, future);
  const status = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
  assert.equal(status.clean, true);
  const full = await cliJson<CheckpointJson & { files: number }>(f, [
    'checkpoint',
    '--change',
    'c',
    '--workspace',
    f.workspace,
    '--full',
  ]);
  assert.equal(full.hashed_files, full.files);
  assert.equal(full.version, 1);
});

test('identical trees give identical revision IDs in two stores, and the ID changes with the parent', async (t) => {
  const root = tempDir(t);
  const a = { root, dataDir: join(root, 'data-a'), workspace: join(root, 'a') };
  const b = { root, dataDir: join(root, 'data-b'), workspace: join(root, 'b') };
  for (const w of [a.workspace, b.workspace]) {
    mkdirSync(w);
    makeProject(w);
  }
  const ia = await initProject(a, 'one');
  const ib = await initProject(b, 'two');
  assert.equal(ia.revision, ib.revision);
  assert.notEqual(ia.repository, ib.repository);
  for (const w of [a.workspace, b.workspace]) writeTree(w, { 'src/extra.ts': 'same edit\n' });
  const ca = await cliJson<CheckpointJson>(a, ['checkpoint', '--change', 'x', '--workspace', a.workspace]);
  const cb = await cliJson<CheckpointJson>(b, ['checkpoint', '--change', 'y', '--workspace', b.workspace]);
  assert.equal(ca.revision, cb.revision);
});

test('everything survives a restart: a new process reads the same state', async (t) => {
  const f = fixture(t);
  const init = await initProject(f);
  writeTree(f.workspace, { 'src/main.ts': 'v2\n' });
  const v1 = await cliJson<CheckpointJson>(f, ['checkpoint', '--change', 'keep', '--workspace', f.workspace]);
  await cliJson(f, ['policy', 'bump']);
  const policy = await cliJson<{ policy_epoch: number; targets: { revision: string }[] }>(f, ['policy', 'show']);
  assert.equal(policy.policy_epoch, 1);
  assert.equal(policy.targets[0]?.revision, init.revision);
  const change = await cliJson<{ current_version: number }>(f, ['change', 'show', 'keep']);
  assert.equal(change.current_version, 1);
  const cat = await runCli(['--data-dir', f.dataDir, 'revision', 'cat', v1.revision, 'src/main.ts']);
  assert.equal(cat.stdout, 'v2\n');
  const status = await cliJson<StatusJson>(f, ['status', '--workspace', f.workspace]);
  assert.equal(status.base_revision, v1.revision);
});

test('an incomplete scan refuses to checkpoint and changes nothing; status reports it', async (t) => {
  const f = fixture(t);
  await initProject(f);
  writeTree(f.workspace, { 'src/a.ts': 'a', 'src/b.ts': 'b' });
  // The project now has 10 files (3 of them the instruction files init-repo wrote): at 10 the scan is complete, at 9 it is not.
  const env = { AGENTSCM_SCAN_MAX_FILES: '9' };
  const refused = await runCli(
    ['--data-dir', f.dataDir, 'checkpoint', '--change', 'c', '--workspace', f.workspace, '--json'],
    { env },
  );
  assertError(refused, 'WORKSPACE_SCAN_INCOMPLETE', 1);
  assertError(await runCli(['--data-dir', f.dataDir, 'change', 'show', 'c']), 'CHANGE_NOT_FOUND', 2);
  const status = await cliJson<StatusJson & { incomplete_reason: string }>(
    f,
    ['status', '--workspace', f.workspace],
    0,
    env,
  );
  assert.equal(status.complete, false);
  assert.equal(status.clean, false);
  assert.match(status.incomplete_reason, /more than 9 files/);
  const ok = await cliJson<CheckpointJson>(f, ['checkpoint', '--change', 'c', '--workspace', f.workspace], 0, {
    AGENTSCM_SCAN_MAX_FILES: '10',
  });
  assert.equal(ok.version, 1);
});

test('workspace commands refuse a missing workspace, another data dir and bad Change IDs', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const ws = ['--workspace', f.workspace];
  assertError(
    await runCli(['--data-dir', f.dataDir, 'checkpoint', '--change', 'c', '--workspace', join(f.root, 'nowhere')]),
    'WORKSPACE_NOT_FOUND',
    4,
  );
  assertError(
    await runCli(['--data-dir', f.dataDir, 'status', '--workspace', f.root, '--json']),
    'WORKSPACE_NOT_FOUND',
    4,
  );
  assert.equal(existsSync(join(f.root, '.agentscm')), false, 'status creates nothing');
  assertError(
    await runCli(['--data-dir', join(f.root, 'other'), 'checkpoint', '--change', 'c', ...ws]),
    'WORKSPACE_DATA_DIR_MISMATCH',
    2,
  );
  assertError(
    await runCli(['checkpoint', '--change', 'c', ...ws], { env: { AGENTSCM_DATA_DIR: join(f.root, 'other') } }),
    'WORKSPACE_DATA_DIR_MISMATCH',
    2,
  );
  assertError(await runCli(['--data-dir', f.dataDir, 'checkpoint', '--change', 'bad/id', ...ws]), 'ID_INVALID', 2);
  assertError(
    await runCli(['--data-dir', f.dataDir, 'checkpoint', '--change', 'c'.repeat(129), ...ws]),
    'ID_INVALID',
    2,
  );
  assertError(await runCli(['--data-dir', f.dataDir, 'checkpoint', ...ws]), 'USAGE', 2);
  const at = await cliJson<CheckpointJson>(f, ['checkpoint', '--change', 'c'.repeat(128), ...ws]);
  assert.equal(at.version, 1);
  // Without --data-dir the workspace's own binding is used.
  const bound = await runCli(['checkpoint', '--change', 'c', ...ws, '--json']);
  assert.equal(bound.code, 0, bound.stderr);
  // A store removed under a workspace is unavailable, and not recreated.
  rmSync(f.dataDir, { recursive: true });
  assertError(await runCli(['checkpoint', '--change', 'c', ...ws]), 'STORE_NOT_INITIALIZED', 4);
  assert.equal(existsSync(f.dataDir), false);
});
