import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { assertError, cliJson, fixture, initProject, integrityOk, type Fixture } from '../support/foundation.js';

/** Start the CLI paused at a test hook point, wait until it is there, SIGKILL it. */
function killAt(point: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: point },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let paused = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`never reached ${point}: ${stderr}`));
    }, 60_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!paused && stderr.includes(`agentscm-test-paused:${point}`)) {
        paused = true;
        child.kill('SIGKILL');
      }
    });
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (paused && signal === 'SIGKILL') resolve();
      else reject(new Error(`process ended without pausing at ${point} (signal ${String(signal)}): ${stderr}`));
    });
  });
}

interface ChangeJson {
  current_version: number;
  versions: { version: number; revision: string }[];
}

async function changeVersions(f: Fixture, id: string): Promise<number[] | null> {
  const result = await runCli(['--data-dir', f.dataDir, 'change', 'show', id, '--json']);
  if (result.code !== 0) {
    assertError(result, 'CHANGE_NOT_FOUND', 2);
    return null;
  }
  return jsonOf<ChangeJson>(result).versions.map((v) => v.version);
}

const CHECKPOINT_POINTS = [
  { point: 'checkpoint:after-scan', committed: false, pending: false },
  { point: 'checkpoint:in-blob-transaction', committed: false, pending: false },
  { point: 'checkpoint:after-pending', committed: false, pending: true },
  { point: 'checkpoint:in-authority-transaction', committed: false, pending: true },
  { point: 'checkpoint:after-authority', committed: true, pending: true },
];

for (const { point, committed, pending } of CHECKPOINT_POINTS) {
  test(`SIGKILL at ${point} leaves the old or the new state and the next checkpoint succeeds`, async (t) => {
    const f = fixture(t);
    const init = await initProject(f);
    writeFileSync(join(f.workspace, 'src/main.ts'), `edited before ${point}\n`);
    await killAt(point, ['--data-dir', f.dataDir, 'checkpoint', '--change', 'c1', '--workspace', f.workspace]);
    integrityOk(f.dataDir);

    assert.deepEqual(
      await changeVersions(f, 'c1'),
      committed ? [1] : null,
      'the authority holds the old or the new state, nothing in between',
    );
    const status = await cliJson<{
      pending_operation: { kind: string } | null;
      ready: boolean;
      base_revision: string;
      generation: number;
    }>(f, ['status', '--workspace', f.workspace]);
    assert.equal(status.pending_operation?.kind ?? null, pending ? 'checkpoint' : null);
    assert.equal(status.ready, false);
    assert.equal(status.base_revision, init.revision, 'the workspace still has the old base until reconciled');

    const next = await cliJson<{
      version: number;
      created: boolean;
      reconciled: string | null;
      generation: number;
      revision: string;
    }>(f, ['checkpoint', '--change', 'c1', '--workspace', f.workspace]);
    assert.equal(next.version, 1, 'exactly one version: never lost, never duplicated');
    assert.equal(next.created, !committed);
    assert.equal(next.reconciled, pending ? (committed ? 'committed' : 'abandoned') : null);
    assert.equal(next.generation, 2);
    assert.deepEqual(await changeVersions(f, 'c1'), [1]);
    const after = await cliJson<{ ready: boolean; base_revision: string }>(f, ['status', '--workspace', f.workspace]);
    assert.equal(after.ready, true);
    assert.equal(after.base_revision, next.revision);
    const cat = await runCli(['--data-dir', f.dataDir, 'revision', 'cat', next.revision, 'src/main.ts']);
    assert.equal(cat.stdout, `edited before ${point}\n`);
    integrityOk(f.dataDir);
  });
}

for (const { point, committed } of [
  { point: 'init:after-pending', committed: false },
  { point: 'init:after-authority', committed: true },
]) {
  test(`SIGKILL at ${point}: running init-repo again finishes the job exactly once`, async (t) => {
    const f = fixture(t);
    await killAt(point, ['--data-dir', f.dataDir, 'init-repo', f.workspace, '--name', 'demo']);
    integrityOk(f.dataDir);
    const half = await cliJson<{ state: string; ready: boolean; pending_operation: { kind: string } | null }>(f, [
      'status',
      '--workspace',
      f.workspace,
    ]);
    assert.deepEqual([half.state, half.ready, half.pending_operation?.kind], ['binding', false, 'init']);
    if (!committed) {
      // Nothing reached the authority: the half-bound workspace is not usable until init-repo runs again.
      assertError(
        await runCli(['--data-dir', f.dataDir, 'checkpoint', '--change', 'c', '--workspace', f.workspace]),
        'WORKSPACE_NOT_FOUND',
        4,
      );
    }
    const again = await cliJson<{ repository: string; resumed: boolean; revision: string }>(f, [
      'init-repo',
      f.workspace,
      '--name',
      'demo',
    ]);
    assert.equal(again.resumed, committed);
    const policy = await cliJson<{ repository: string; targets: { revision: string }[] }>(f, ['policy', 'show']);
    assert.equal(policy.repository, again.repository, 'one repository in the store');
    assert.equal(policy.targets[0]?.revision, again.revision);
    const status = await cliJson<{ ready: boolean }>(f, ['status', '--workspace', f.workspace]);
    assert.equal(status.ready, true);
  });
}

function start(args: readonly string[]): Promise<CliResult> {
  return runCli(args);
}

test('two processes checkpointing one workspace at once serialize: one version, the other reports it or a conflict', async (t) => {
  const f = fixture(t);
  await initProject(f);
  writeFileSync(join(f.workspace, 'src/main.ts'), 'concurrent edit\n');
  const args = ['--data-dir', f.dataDir, 'checkpoint', '--change', 'c1', '--workspace', f.workspace, '--json'];
  const results = await Promise.all([start(args), start(args)]);
  const ok = results
    .filter((r) => r.code === 0)
    .map((r) => jsonOf<{ version: number; created: boolean; revision: string }>(r));
  const conflicts = results.filter((r) => r.code === 3);
  assert.equal(ok.length + conflicts.length, 2, results.map((r) => r.stderr).join('\n'));
  assert.equal(ok.filter((r) => r.created).length, 1, 'exactly one process made version 1');
  for (const r of ok) assert.equal(r.version, 1);
  for (const r of conflicts) assert.match(r.stderr, /error\[(WORKSPACE_BUSY|CHANGE_CONFLICT|STORE_BUSY)\]/);
  assert.deepEqual(await changeVersions(f, 'c1'), [1]);
  integrityOk(f.dataDir);
});

test('two workspaces writing one store at once both succeed and the store stays intact', async (t) => {
  const f = fixture(t);
  const g = { ...fixture(t), dataDir: f.dataDir };
  await initProject(f, 'first');
  await initProject(g, 'second');
  writeFileSync(join(f.workspace, 'a.txt'), 'a');
  writeFileSync(join(g.workspace, 'b.txt'), 'b');
  const results = await Promise.all([
    start(['--data-dir', f.dataDir, 'checkpoint', '--change', 'same-id', '--workspace', f.workspace, '--json']),
    start(['--data-dir', f.dataDir, 'checkpoint', '--change', 'same-id', '--workspace', g.workspace, '--json']),
  ]);
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  for (const r of results) assert.equal(jsonOf<{ version: number }>(r).version, 1);
  integrityOk(f.dataDir);
  assert.ok(existsSync(join(f.dataDir, 'native', 'lock')));
});
