/**
 * `init-repo` of a git work tree (docs/git.md "Binding a git work tree"): what git would record (nested
 * .gitignore, .git/info/exclude, exec bits, symlinks), and the refusals (submodules, nested repositories,
 * byte-changing attributes, core.autocrlf, --git without a work tree), each leaving no store and no workspace.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { tempDir } from '../helpers/tmp.js';
import {
  changeVersion,
  commitAll,
  git,
  initRepo,
  makeRepo,
  okJson,
  refused,
  revisionFiles,
} from './git-read-support.js';

function repo(t: TestContext): { data: string; ws: string } {
  const root = tempDir(t, 'agentscm-git-bind-');
  const ws = makeRepo(join(root, 'ws'));
  writeFileSync(join(ws, 'README'), 'start\n');
  return { data: join(root, 'data'), ws };
}

/** The refusal left nothing: no store, no `.agentscm/` in the work tree. */
function nothingRecorded(data: string, ws: string): void {
  assert.equal(existsSync(join(data, 'authority.sqlite')), false);
  assert.equal(existsSync(join(ws, '.agentscm')), false);
}

test('a git work tree is bound with what git would record', async (t) => {
  const { data, ws } = repo(t);
  mkdirSync(join(ws, 'src', 'gen'), { recursive: true });
  writeFileSync(join(ws, '.gitignore'), '*.log\n');
  writeFileSync(join(ws, 'src', '.gitignore'), 'gen/\n!keep.log\n');
  writeFileSync(join(ws, 'src', 'keep.log'), 'kept by the nested .gitignore\n');
  writeFileSync(join(ws, 'src', 'drop.log'), 'ignored\n');
  writeFileSync(join(ws, 'src', 'gen', 'out.js'), 'generated\n');
  writeFileSync(join(ws, 'local-notes.md'), 'excluded by .git/info/exclude\n');
  writeFileSync(join(ws, '.git', 'info', 'exclude'), 'local-*\n');
  writeFileSync(join(ws, 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(ws, 'run.sh'), 0o755);
  symlinkSync('README', join(ws, 'readme-link'));
  commitAll(ws, 'start');
  const init = await initRepo(data, ws, 'app', ['--git']);
  assert.equal(init.git_work_tree, ws);
  const recorded = revisionFiles(data, init.revision).map((f) => [f.path, f.mode]);
  assert.deepEqual(recorded, [
    ['.gitignore', 'file'],
    ['README', 'file'],
    ['readme-link', 'symlink'],
    ['run.sh', 'executable'],
    ['src/.gitignore', 'file'],
    ['src/keep.log', 'file'],
  ]);
  // git records the same paths (untracked files included, ignored ones not).
  const gitPaths = git(ws, ['ls-files', '--cached', '--others', '--exclude-standard']).split('\n').filter(Boolean);
  assert.deepEqual(
    gitPaths.sort(),
    recorded.map(([p]) => p),
  );
});

test('byte-changing conversion is refused naming the files whose bytes differ; nothing is recorded', async (t) => {
  for (const [file, text, name, bytes] of [
    ['.gitattributes', '*.txt eol=crlf\n', 'a.txt', 'a\r\nb\r\n'],
    ['.gitattributes', '*.txt filter=lfs\n', 'a.txt', 'a\n'],
    ['.gitattributes', '* text=auto\n', 'a.txt', 'a\r\n'],
    ['.gitattributes', '*.txt working-tree-encoding=UTF-16\n', 'a.txt', 'a\n'],
    ['.git/info/attributes', '*.c ident\n', 'b.c', '/* $Id: 0123abcd $ */\n'],
  ] as const) {
    const { data, ws } = repo(t);
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    writeFileSync(join(ws, 'b.c'), 'int x;\n');
    writeFileSync(join(ws, name), bytes);
    writeFileSync(join(ws, file), text);
    const out = await refused(
      data,
      ['init-repo', ws, '--name', 'app', '--no-instructions'],
      'GIT_ATTRIBUTES_UNSUPPORTED',
    );
    assert.match(out.stderr, /nothing was recorded/);
    assert.match(out.stderr, new RegExp(`"${name.replace('.', '\\.')}"`), `${text}: ${out.stderr}`);
    nothingRecorded(data, ws);
  }
  // Attributes set off are fine.
  const { data, ws } = repo(t);
  writeFileSync(join(ws, '.gitattributes'), '*.png -text binary\n');
  writeFileSync(join(ws, 'a.png'), Buffer.from([0x89, 0x50, 0x0d, 0x0a]));
  await initRepo(data, ws);
  // core.autocrlf converts without any attribute: LF files pass, a CRLF file is refused.
  const other = repo(t);
  git(other.ws, ['config', 'core.autocrlf', 'true']);
  writeFileSync(join(other.ws, 'lf.txt'), 'x\ny\n');
  await initRepo(other.data, other.ws);
  writeFileSync(join(other.ws, 'dos.txt'), 'x\r\ny\r\n');
  const out = await refused(
    other.data,
    ['checkpoint', '--workspace', other.ws, '--change', 'c1'],
    'GIT_ATTRIBUTES_UNSUPPORTED',
  );
  assert.match(out.stderr, /"dos\.txt" \(core\.autocrlf=true\)/);
  assert.doesNotMatch(out.stderr, /lf\.txt/);
  assert.equal(changeVersion(other.data, 'c1'), null);
});

test('`* text=auto eol=lf` with LF files binds and checkpoints; one CRLF file is refused by name', async (t) => {
  const { data, ws } = repo(t);
  writeFileSync(join(ws, '.gitattributes'), '* text=auto eol=lf\n*.c ident\n');
  mkdirSync(join(ws, 'src'));
  for (let i = 0; i < 30; i += 1) writeFileSync(join(ws, 'src', `f${i}.ts`), `export const n = ${i};\n`);
  writeFileSync(join(ws, 'src', 'plain.c'), 'int x; /* no keyword */\n');
  writeFileSync(join(ws, 'logo.bin'), Buffer.from([0, 1, 0x0d, 0x0a, 2]));
  commitAll(ws, 'start');
  const init = await initRepo(data, ws, 'app', ['--git']);
  assert.equal(init.files, 34);
  const cp = await okJson<{ version: number }>(data, ['checkpoint', '--workspace', ws, '--change', 'c1']);
  assert.equal(cp.version, 1);
  writeFileSync(join(ws, 'src', 'f7.ts'), 'export const n = 7;\r\n');
  const crlf = await refused(data, ['checkpoint', '--workspace', ws, '--change', 'c1'], 'GIT_ATTRIBUTES_UNSUPPORTED');
  assert.match(crlf.stderr, /"src\/f7\.ts" \(text=auto eol=lf\)/);
  assert.doesNotMatch(crlf.stderr, /f1\.ts|logo\.bin|plain\.c/);
  writeFileSync(join(ws, 'src', 'f7.ts'), 'export const n = 7;\n');
  // ident: a file that holds `$Id$`, checked out by git, holds the expanded keyword git would collapse.
  writeFileSync(join(ws, 'src', 'id.c'), '/* $Id$ */\n');
  commitAll(ws, 'ident');
  rmSync(join(ws, 'src', 'id.c'));
  git(ws, ['checkout', '--', 'src/id.c']);
  const ident = await refused(data, ['checkpoint', '--workspace', ws, '--change', 'c1'], 'GIT_ATTRIBUTES_UNSUPPORTED');
  assert.match(ident.stderr, /"src\/id\.c" \(text=auto eol=lf ident\)/);
  assert.equal(changeVersion(data, 'c1'), 1n);
});

test('submodules and nested repositories are refused; --git needs a work tree', async (t) => {
  const withModules = repo(t);
  writeFileSync(join(withModules.ws, '.gitmodules'), '[submodule "lib"]\n\tpath = lib\n\turl = ../lib\n');
  await refused(withModules.data, ['init-repo', withModules.ws, '--name', 'app'], 'GIT_SUBMODULE_UNSUPPORTED');
  nothingRecorded(withModules.data, withModules.ws);

  const nested = repo(t);
  makeRepo(join(nested.ws, 'vendor', 'lib'));
  writeFileSync(join(nested.ws, 'vendor', 'lib', 'x.c'), 'x\n');
  await refused(nested.data, ['init-repo', nested.ws, '--name', 'app'], 'GIT_SUBMODULE_UNSUPPORTED');
  nothingRecorded(nested.data, nested.ws);
  // Excluded, the nested repository is no longer part of the tree.
  writeFileSync(join(nested.ws, '.git', 'info', 'exclude'), '/vendor/lib/\n');
  assert.equal((await initRepo(nested.data, nested.ws)).files, 1);

  const plain = tempDir(t, 'agentscm-git-bind-plain-');
  mkdirSync(join(plain, 'ws'));
  await refused(join(plain, 'data'), ['init-repo', join(plain, 'ws'), '--name', 'app', '--git'], 'GIT_NOT_A_WORK_TREE');
  nothingRecorded(join(plain, 'data'), join(plain, 'ws'));
  // Without --git a plain directory is bound as before.
  assert.equal((await initRepo(join(plain, 'data'), join(plain, 'ws'))).git_work_tree, null);
});

test('a checkpoint of a bound work tree refuses attributes added after binding, and records nothing', async (t) => {
  const { data, ws } = repo(t);
  await initRepo(data, ws);
  writeFileSync(join(ws, '.gitattributes'), '*.txt text eol=lf\n');
  writeFileSync(join(ws, 'notes.txt'), 'a\r\nb\r\n');
  await refused(data, ['checkpoint', '--workspace', ws, '--change', 'c1'], 'GIT_ATTRIBUTES_UNSUPPORTED');
  assert.equal(changeVersion(data, 'c1'), null);
  writeFileSync(join(ws, '.gitattributes'), '*.txt -text\n');
  const cp = await okJson<{ version: number; files: number }>(data, [
    'checkpoint',
    '--workspace',
    ws,
    '--change',
    'c1',
  ]);
  assert.equal(cp.version, 1);
  assert.equal(cp.files, 3);
});
