import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  assertError,
  cliJson,
  fixture,
  initProject,
  integrityOk,
  makeProject,
  runCliIn,
} from '../support/foundation.js';

test('init-repo creates the store, registers the repository, binds the workspace and sets main', async (t) => {
  const f = fixture(t);
  const init = await cliJson<Record<string, unknown>>(f, ['init-repo', f.workspace, '--name', 'demo']);
  assert.match(String(init.repository), /^[0-9a-f]{32}$/);
  assert.match(String(init.revision), /^[0-9a-f]{64}$/);
  assert.equal(init.target, 'main');
  assert.equal(init.workspace, f.workspace);
  assert.equal(init.policy_epoch, 0);
  assert.equal(
    init.files,
    8,
    'README, src/main.ts, bin/run.sh, .gitignore, main-link (debug.log ignored) and the three instruction files',
  );
  assert.ok(existsSync(join(f.dataDir, 'native', 'lock')));
  assert.ok(existsSync(join(f.workspace, '.agentscm', 'workspace.sqlite')));
  const revision = await cliJson<{ entries: { path: string; mode: string }[]; parent: unknown }>(f, [
    'revision',
    'show',
    String(init.revision),
  ]);
  assert.equal(revision.parent, null);
  assert.deepEqual(
    revision.entries.map((e) => `${e.mode}:${e.path}`),
    [
      'file:.cursor/rules/agentscm.mdc',
      'file:.github/copilot-instructions.md',
      'file:.gitignore',
      'file:AGENTS.md',
      'file:README.md',
      'executable:bin/run.sh',
      'symlink:main-link',
      'file:src/main.ts',
    ],
  );
  const policy = await cliJson<{ policy_epoch: number; targets: { name: string; revision: string }[] }>(f, [
    'policy',
    'show',
  ]);
  assert.deepEqual(policy.targets, [{ name: 'main', revision: init.revision }]);
  integrityOk(f.dataDir);
});

test('init-repo refuses a bound directory, a taken name, a bad name and a missing path, changing nothing', async (t) => {
  const f = fixture(t);
  const first = await initProject(f);
  assertError(
    await runCli(['--data-dir', f.dataDir, 'init-repo', f.workspace, '--name', 'other']),
    'WORKSPACE_EXISTS',
    3,
  );

  const second = join(f.root, 'second');
  mkdirSync(second);
  makeProject(second);
  assertError(
    await runCli(['--data-dir', f.dataDir, 'init-repo', second, '--name', 'demo', '--json']),
    'REPOSITORY_EXISTS',
    3,
  );
  assert.equal(existsSync(join(second, '.agentscm')), false, 'a refused init-repo binds nothing');

  assertError(await runCli(['--data-dir', f.dataDir, 'init-repo', second, '--name', 'bad name']), 'ID_INVALID', 2);
  assertError(await runCli(['--data-dir', f.dataDir, 'init-repo', second, '--name', 'x'.repeat(129)]), 'ID_INVALID', 2);
  assertError(
    await runCli(['--data-dir', f.dataDir, 'init-repo', join(f.root, 'missing'), '--name', 'm']),
    'WORKSPACE_NOT_FOUND',
    4,
  );
  assertError(await runCli(['--data-dir', f.dataDir, 'init-repo', second]), 'USAGE', 2);
  assert.equal(existsSync(join(second, '.agentscm')), false);

  const policy = await cliJson<{ repository: string }>(f, ['policy', 'show']);
  assert.equal(policy.repository, first.repository, 'the store still holds exactly the first repository');
  // A 128-character name is at the bound and accepted.
  const ok = await cliJson<{ name: string }>(f, ['init-repo', second, '--name', 'n'.repeat(128)]);
  assert.equal(ok.name, 'n'.repeat(128));
});

test('--data-dir works before the command, after it and as AGENTSCM_DATA_DIR', async (t) => {
  const root = tempDir(t);
  const names = ['leading', 'trailing', 'env'];
  for (const name of names) {
    mkdirSync(join(root, name));
    writeFileSync(join(root, name, 'f.txt'), name);
  }
  const data = join(root, 'data');
  const a = await runCli(['--data-dir', data, 'init-repo', join(root, 'leading'), '--name', 'leading', '--json']);
  const b = await runCli(['init-repo', join(root, 'trailing'), '--name', 'trailing', '--data-dir', data, '--json']);
  const c = await runCli(['init-repo', join(root, 'env'), '--name', 'env', '--json'], {
    env: { AGENTSCM_DATA_DIR: data },
  });
  for (const r of [a, b, c]) assert.equal(r.code, 0, r.stderr);
  for (const r of [a, b, c]) assert.equal(jsonOf<{ data_dir: string }>(r).data_dir, data);
  // Three repositories: commands must now be told which one.
  assertError(await runCli(['--data-dir', data, 'policy', 'show']), 'USAGE', 2);
  const shown = await runCli(['--data-dir', data, 'policy', 'show', '--repository', 'env', '--json']);
  assert.equal(jsonOf<{ name: string }>(shown).name, 'env');
});

test('a data directory inside the workspace is never part of a revision', async (t) => {
  const root = tempDir(t);
  writeFileSync(join(root, 'main.ts'), 'x');
  // Run in the project directory with a data directory inside the workspace.
  const result = await runCliIn(root, ['--data-dir', 'agentscm-data', 'init-repo', '.', '--name', 'here', '--json']);
  assert.equal(result.code, 0, result.stderr);
  const init = jsonOf<{ files: number; data_dir: string }>(result);
  assert.equal(init.files, 4, 'main.ts and the three instruction files');
  assert.ok(readdirSync(join(root, 'agentscm-data')).includes('native'));
  const status = jsonOf<{ clean: boolean }>(await runCliIn(join(root, 'agentscm-data'), ['status', '--json']));
  assert.equal(status.clean, true);
});
