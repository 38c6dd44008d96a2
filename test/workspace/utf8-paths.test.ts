/** Workspace paths per docs/wire.md "Workspace paths": any valid UTF-8 name end to end; a non-UTF-8 name has its own code. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { relativePathProblem, workspacePathProblem } from '../../src/contracts/paths.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const NFC = 'caf\u00e9.txt';
const NFD = 'cafe\u0301.txt';
const CJK = '\u6f22\u5b57/\u6587\u4ef6.md';
const EMOJI = 'emoji-\u{1f600}.txt';

test('init-repo, checkpoint, status and revision cat take accented, CJK, emoji, NFC and NFD names byte-exact', async (t) => {
  const root = tempDir(t);
  const ws = join(root, 'project');
  const data = join(root, 'data');
  mkdirSync(join(ws, '\u6f22\u5b57'), { recursive: true });
  for (const name of [NFC, NFD, CJK, EMOJI]) writeFileSync(join(ws, name), `content of ${name}\n`);
  const init = await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'utf8', '--no-instructions', '--json']);
  assert.equal(init.code, 0, init.stderr);
  const show = jsonOf<{ entries: { path: string }[] }>(
    await runCli([
      '--data-dir',
      data,
      'revision',
      'show',
      jsonOf<{ revision: string }>(init).revision,
      '--repository',
      'utf8',
      '--json',
    ]),
  );
  assert.deepEqual(
    show.entries.map((e) => e.path),
    [NFC, NFD, EMOJI, CJK].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
  );
  for (const name of [NFC, NFD, CJK, EMOJI]) {
    const cat = await runCli([
      '--data-dir',
      data,
      'revision',
      'cat',
      jsonOf<{ revision: string }>(init).revision,
      name,
      '--repository',
      'utf8',
    ]);
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout, `content of ${name}\n`, `the bytes of ${name}, not of its other normalization`);
  }
  writeFileSync(join(ws, NFD), 'changed\n');
  const status = jsonOf<{ changes: { path: string; kind: string }[] }>(
    await runCli(['status', '--workspace', ws, '--json']),
  );
  assert.deepEqual(status.changes, [{ path: NFD, kind: 'modified' }]);
  const cp = await runCli(['--data-dir', data, 'checkpoint', '--change', 'c1', '--workspace', ws, '--json']);
  assert.equal(cp.code, 0, cp.stderr);
});

test('a name that is not UTF-8 refuses init-repo and checkpoint with WORKSPACE_PATH_NOT_UTF8 and records nothing', async (t) => {
  const root = tempDir(t);
  const ws = join(root, 'project');
  const data = join(root, 'data');
  mkdirSync(ws);
  writeFileSync(join(ws, 'ok.txt'), 'ok\n');
  const latin1 = Buffer.concat([Buffer.from(`${ws}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]);
  writeFileSync(latin1, 'x');
  const refused = await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'bad', '--no-instructions', '--json']);
  assert.equal(refused.code, 1);
  assert.equal(jsonOf<{ error: { code: string } }>(refused).error.code, 'WORKSPACE_PATH_NOT_UTF8');
  assert.match(refused.stderr, /caf\\xe9\.txt/);
  assert.equal(existsSync(data), false, 'no store was created');
  assert.equal(existsSync(join(ws, '.agentscm')), false, 'the workspace was not bound');

  const { rmSync } = await import('node:fs');
  rmSync(latin1);
  assert.equal(
    (await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'bad', '--no-instructions', '--json'])).code,
    0,
  );
  writeFileSync(latin1, 'x');
  const status = jsonOf<{ complete: boolean; incomplete_code: string }>(
    await runCli(['status', '--workspace', ws, '--json']),
  );
  assert.deepEqual(
    { complete: status.complete, code: status.incomplete_code },
    { complete: false, code: 'WORKSPACE_PATH_NOT_UTF8' },
  );
  const cp = await runCli(['--data-dir', data, 'checkpoint', '--change', 'c1', '--workspace', ws, '--json']);
  assert.equal(cp.code, 1);
  assert.equal(jsonOf<{ error: { code: string } }>(cp).error.code, 'WORKSPACE_PATH_NOT_UTF8');
  const list = jsonOf<unknown[]>(await runCli(['--data-dir', data, 'change', 'list', '--repository', 'bad', '--json']));
  assert.equal(JSON.stringify(list).includes('c1'), false, 'no Change was created');
});

test('workspace paths take UTF-8 names; named references and skill-package paths keep the ASCII rule', () => {
  for (const path of [NFC, NFD, CJK, EMOJI, 'back\\slash:colon', 'del\u007f']) {
    assert.equal(workspacePathProblem(path), undefined, path);
    assert.match(relativePathProblem(path) ?? '', /non-ASCII|backslash|":"|control character/, path);
  }
  for (const path of ['', 'a//b', './a', 'a/..', '/abs', 'tab\tname', 'nul\u0000', 'lone\ud800']) {
    assert.notEqual(workspacePathProblem(path), undefined, JSON.stringify(path));
  }
  assert.equal(workspacePathProblem('\u00e9'.repeat(256)), undefined, '512 bytes is the bound');
  assert.equal(workspacePathProblem('\u00e9'.repeat(257)), 'it is longer than 512 bytes');
});
