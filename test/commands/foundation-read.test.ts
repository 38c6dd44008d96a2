import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { assertError, cliJson, fixture, initProject } from '../support/foundation.js';

const REV = 'a'.repeat(64);

test('every read command on a missing store is STORE_NOT_INITIALIZED (exit 4) and creates nothing', async (t) => {
  const root = tempDir(t);
  const dataDir = join(root, 'missing', 'data');
  const commands = [
    ['revision', 'show', REV],
    ['revision', 'cat', REV, 'a.txt'],
    ['change', 'show', 'c1'],
    ['policy', 'show'],
    ['policy', 'bump'],
  ];
  for (const args of commands) {
    assertError(await runCli(['--data-dir', dataDir, ...args, '--json']), 'STORE_NOT_INITIALIZED', 4);
  }
  assert.equal(existsSync(join(root, 'missing')), false);
});

test('revision cat writes the exact bytes; --json carries them base64 with the entry', async (t) => {
  const f = fixture(t);
  const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0x22, 0x5c, 0xc3, 0x28]);
  writeFileSync(join(f.workspace, 'binary.dat'), bytes);
  const init = await initProject(f);
  const cat = await runCli(['--data-dir', f.dataDir, 'revision', 'cat', init.revision, 'binary.dat']);
  assert.equal(cat.code, 0, cat.stderr);
  assert.deepEqual(cat.stdoutBytes, bytes);
  const link = await runCli(['--data-dir', f.dataDir, 'revision', 'cat', init.revision, 'main-link']);
  assert.equal(link.stdout, 'src/main.ts');
  const json = await cliJson<{ mode: string; size: number; content_base64: string; blob: string }>(f, [
    'revision',
    'cat',
    init.revision,
    'bin/run.sh',
  ]);
  assert.equal(json.mode, 'executable');
  assert.equal(Buffer.from(json.content_base64, 'base64').toString(), '#!/bin/sh\necho run\n');
  assert.equal(json.size, 19);
  assert.match(json.blob, /^[0-9a-f]{64}$/);
});

test('read commands refuse malformed and unknown identifiers and paths with stable codes', async (t) => {
  const f = fixture(t);
  const init = await initProject(f);
  const d = ['--data-dir', f.dataDir];
  assertError(await runCli([...d, 'revision', 'show', 'XYZ', '--json']), 'ID_INVALID', 2);
  assertError(await runCli([...d, 'revision', 'show', init.revision.toUpperCase()]), 'ID_INVALID', 2);
  assertError(await runCli([...d, 'revision', 'show', REV]), 'REVISION_NOT_FOUND', 2);
  assertError(await runCli([...d, 'revision', 'cat', init.revision, 'nope.txt']), 'PATH_NOT_FOUND', 2);
  assertError(await runCli([...d, 'revision', 'cat', init.revision, '../etc/passwd']), 'PATH_INVALID', 2);
  assertError(await runCli([...d, 'revision', 'cat', init.revision, '/abs']), 'PATH_INVALID', 2);
  assertError(await runCli([...d, 'revision', 'cat', init.revision, `${'p/'.repeat(256)}x`]), 'PATH_INVALID', 2);
  assertError(await runCli([...d, 'change', 'show', 'absent']), 'CHANGE_NOT_FOUND', 2);
  assertError(await runCli([...d, 'change', 'show', 'bad id']), 'ID_INVALID', 2);
  assertError(await runCli([...d, 'policy', 'show', '--repository', 'f'.repeat(32)]), 'REPOSITORY_NOT_FOUND', 2);
  assertError(await runCli([...d, 'policy', 'show', '--repository', 'nobody']), 'REPOSITORY_NOT_FOUND', 2);
  assertError(await runCli([...d, 'revision', 'show']), 'USAGE', 2);
  const byId = await cliJson<{ name: string }>(f, ['policy', 'show', '--repository', init.repository]);
  assert.equal(byId.name, 'demo');
});

test('policy bump increments the epoch by one each time, exactly', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const first = await cliJson<{ previous_epoch: number; policy_epoch: number }>(f, ['policy', 'bump']);
  assert.deepEqual([first.previous_epoch, first.policy_epoch], [0, 1]);
  const second = await cliJson<{ previous_epoch: number; policy_epoch: number }>(f, [
    'policy',
    'bump',
    '--repository',
    'demo',
  ]);
  assert.deepEqual([second.previous_epoch, second.policy_epoch], [1, 2]);
  const human = await runCli(['--data-dir', f.dataDir, 'policy', 'show']);
  assert.match(human.stdout, /policy epoch 2/);
});

test('every foundation command has help with a description, examples and flags', async () => {
  for (const args of [
    ['init-repo'],
    ['checkpoint'],
    ['status'],
    ['revision', 'show'],
    ['revision', 'cat'],
    ['change', 'show'],
    ['policy', 'show'],
    ['policy', 'bump'],
  ]) {
    const help = await runCli([...args, '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /USAGE/);
    assert.match(help.stdout, /EXAMPLES/);
    assert.match(help.stdout, /--data-dir/);
    assert.match(help.stdout, /--json/);
  }
  const topic = await runCli(['revision', '--help']);
  assert.match(topic.stdout, /revision show/);
});
