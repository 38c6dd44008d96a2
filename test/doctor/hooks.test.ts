/**
 * `agentscm doctor` on installed hooks: the Claude Code and Codex settings files of the user's
 * home (HOME of the child) and of a workspace, written by the real installers or by hand. An
 * entry running this agentscm (bin/dev.js here, directly or as `agentscm` on PATH) passes and
 * hands its token file to the grants check; one running another binary is HOOK_STALE; one whose
 * store is gone HOOK_DATA_DIR_MISSING; a file that is not strict JSON HOOK_FILE_INVALID — and no
 * settings file is ever changed.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { installEditHook } from '../../src/agent-state/install-edit-hook.js';
import { installStop, type InstallStopInput } from '../../src/hooks/install-stop.js';
import { withStore } from '../../src/tasks/store.js';
import { initRepo } from '../../src/workspace/init.js';
import { DEV_BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { makeGrant } from '../support/grants.js';
import { makeTaskStore } from '../support/tasks.js';
import { doctor, findingOf, findingsOf, fingerprint, testHome } from './fixture.js';

interface HookSetup {
  readonly dir: string;
  readonly dataDir: string;
  readonly workspace: string;
  readonly tokenFile: string;
}

function setup(t: TestContext): HookSetup {
  const dir = tempDir(t, 'agentscm-doctor-');
  const dataDir = join(dir, 'data');
  makeTaskStore(dataDir);
  const grants = join(dir, 'grants');
  mkdirSync(grants, { mode: 0o700 });
  const tokenFile = makeGrant(dataDir, grants, { owner_id: 'alice', agent_id: 'claude-1' }).token_file;
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  return { dir, dataDir, workspace, tokenFile };
}

function taskStop(s: HookSetup, home: string, executable: string, overrides: Partial<InstallStopInput> = {}): void {
  installStop({
    client: 'claude-code',
    mode: 'task-stop',
    scope: 'user',
    change: 'change-1',
    workspace: s.workspace,
    dataDir: s.dataDir,
    repo: s.workspace,
    executable,
    task: { endpoint: 'http://127.0.0.1:8787', repository: 'acme/widgets', profile: 'default', tokenFile: s.tokenFile },
    remove: false,
    dryRun: false,
    home,
    ...overrides,
  });
}

test('hooks installed for this agentscm pass, and the token file of a task-stop hook is authenticated', async (t) => {
  const s = setup(t);
  const home = testHome(t);
  taskStop(s, home, DEV_BIN);
  taskStop(s, home, DEV_BIN, { client: 'codex' });
  installEditHook({
    client: 'claude-code',
    settings: 'user',
    repo: s.workspace,
    executable: DEV_BIN,
    agentId: null,
    home,
  });
  const before = fingerprint(home);
  const { report } = await doctor(home, ['--data-dir', s.dataDir]);
  const hooks = findingsOf(report, 'hooks');
  assert.deepEqual(
    hooks.map((f) => f.code),
    ['OK', 'OK', 'OK'],
    JSON.stringify(hooks, null, 2),
  );
  assert.match(
    hooks[0]?.message ?? '',
    new RegExp(`${join(home, '.claude', 'settings.json')} (Stop|PreToolUse) hook runs this agentscm`),
  );
  const token = findingOf(report, 'grants.token-file', 'OK');
  assert.match(
    token.message,
    new RegExp(`token file ${s.tokenFile} \\(named by ${join(home, '.claude', 'settings.json')}\\): grant .* is live`),
  );
  assert.equal(report.ok, true);
  assert.deepEqual(fingerprint(home), before);
});

test('a hook entry that runs another agentscm binary is HOOK_STALE with the reinstall fix', async (t) => {
  const s = setup(t);
  const home = testHome(t);
  const other = join(s.dir, 'old-agentscm', 'bin', 'run.js');
  mkdirSync(join(s.dir, 'old-agentscm', 'bin'), { recursive: true });
  writeFileSync(other, '#!/usr/bin/env node\n');
  chmodSync(other, 0o755);
  taskStop(s, home, other);
  taskStop(s, home, '/opt/agentscm-gone/bin/run.js', { client: 'codex' });
  const { report } = await doctor(home, ['--data-dir', s.dataDir]);
  const [claude, codex] = findingsOf(report, 'hooks');
  assert.equal(claude?.code, 'HOOK_STALE');
  assert.equal(claude?.status, 'fail');
  assert.match(claude?.message ?? '', new RegExp(`runs another agentscm: ${other} is ${other}, not this agentscm`));
  assert.match(claude?.fix ?? '', /install it again with this agentscm: agentscm install-stop … --executable PATH/);
  assert.equal(codex?.code, 'HOOK_STALE');
  assert.match(codex?.message ?? '', /\/opt\/agentscm-gone\/bin\/run\.js does not exist/);
});

test('a project hook running `agentscm` resolves it on PATH; a hook whose store is gone is HOOK_DATA_DIR_MISSING', async (t) => {
  const s = setup(t);
  const home = testHome(t);
  writeFileSync(join(s.workspace, 'README.md'), 'demo\n');
  withStore(join(s.dir, 'ws-data'), 'write', (store) => initRepo(store, { path: s.workspace, name: 'demo' }));
  const bin = join(s.dir, 'bin');
  mkdirSync(bin);
  symlinkSync(DEV_BIN, join(bin, 'agentscm'));
  taskStop(s, home, 'agentscm', { scope: 'project' });
  taskStop(s, home, DEV_BIN, { client: 'codex', scope: 'project', dataDir: join(s.dir, 'no-store') });
  const { report } = await doctor(home, ['--data-dir', s.dataDir, '--workspace', s.workspace], {
    env: { PATH: `${bin}:${process.env.PATH ?? ''}` },
  });
  const [claude, codex] = findingsOf(report, 'hooks');
  assert.equal(claude?.code, 'OK', JSON.stringify(claude));
  assert.match(
    claude?.message ?? '',
    new RegExp(`${join(s.workspace, '.claude', 'settings.json')} Stop hook runs this agentscm`),
  );
  assert.equal(codex?.code, 'HOOK_DATA_DIR_MISSING');
  assert.match(codex?.message ?? '', new RegExp(`--data-dir ${join(s.dir, 'no-store')}, which holds no native store`));

  // Without agentscm on PATH the same entry names what is missing.
  const bare = await doctor(home, ['--data-dir', s.dataDir, '--workspace', s.workspace], {
    env: { PATH: '/usr/bin:/bin' },
  });
  assert.match(findingsOf(bare.report, 'hooks')[0]?.message ?? '', /runs another agentscm: agentscm is not on PATH/);
});

test('a settings file that is not strict JSON is HOOK_FILE_INVALID and is left as it was', async (t) => {
  const s = setup(t);
  const home = testHome(t);
  mkdirSync(join(home, '.claude'));
  const file = join(home, '.claude', 'settings.json');
  writeFileSync(file, '{"hooks": {}, "hooks": {}}');
  const { report } = await doctor(home, ['--data-dir', s.dataDir]);
  const invalid = findingOf(report, 'hooks', 'HOOK_FILE_INVALID');
  assert.match(invalid.message, /HOOK_SETTINGS_INVALID: .*settings\.json: it cannot be read as strict JSON/);
  assert.equal(readFileSync(file, 'utf8'), '{"hooks": {}, "hooks": {}}');
});

test('settings files without agentscm hooks are NO_AGENTSCM_HOOKS, and none at all NO_HOOK_FILES', async (t) => {
  const s = setup(t);
  const home = testHome(t);
  const none = await doctor(home, ['--data-dir', s.dataDir]);
  assert.equal(findingOf(none.report, 'hooks', 'NO_HOOK_FILES').status, 'skip');
  mkdirSync(join(home, '.claude'));
  writeFileSync(
    join(home, '.claude', 'settings.json'),
    JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo done' }] }] } }),
  );
  const other = await doctor(home, ['--data-dir', s.dataDir]);
  assert.equal(findingOf(other.report, 'hooks', 'NO_AGENTSCM_HOOKS').status, 'skip');
});
