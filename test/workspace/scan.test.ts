import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';

import { DEFAULT_SCAN_BOUNDS, scanBoundsFromEnv, scanWorkspace } from '../../src/workspace/scan.js';
import { tempDir } from '../helpers/tmp.js';

function put(root: string, rel: string, content = 'x'): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), content);
}

function paths(root: string, options = {}): string[] {
  const scan = scanWorkspace(root, options);
  assert.equal(scan.complete, true, scan.problem ?? '');
  return scan.files.map((f) => f.path);
}

test('the scan keeps symlinks as symlinks, keeps the executable bit and never enters .git or .agentscm', (t) => {
  const root = tempDir(t);
  put(root, 'a.txt');
  put(root, 'bin/run.sh', '#!/bin/sh\n');
  chmodSync(join(root, 'bin/run.sh'), 0o755);
  put(root, 'outside/secret.txt', 'do not follow');
  symlinkSync('outside', join(root, 'dir-link'));
  symlinkSync('/nonexistent/target', join(root, 'dangling'));
  put(root, '.git/HEAD', 'ref');
  put(root, 'sub/.git', 'gitdir: elsewhere');
  put(root, '.agentscm/workspace.sqlite', 'state');
  const scan = scanWorkspace(root);
  assert.equal(scan.complete, true);
  const byPath = new Map(scan.files.map((f) => [f.path, f.mode]));
  assert.deepEqual([...byPath.keys()], ['a.txt', 'bin/run.sh', 'dangling', 'dir-link', 'outside/secret.txt']);
  assert.equal(byPath.get('bin/run.sh'), 'executable');
  assert.equal(byPath.get('a.txt'), 'file');
  assert.equal(byPath.get('dir-link'), 'symlink');
  assert.equal(byPath.get('dangling'), 'symlink');
});

test('.gitignore files apply at every level with git precedence, negation and directory rules', (t) => {
  const root = tempDir(t);
  put(root, '.gitignore', '*.log\nbuild/\n!keep.log\n/rooted.txt\n');
  put(root, 'a.log');
  put(root, 'keep.log');
  put(root, 'rooted.txt');
  put(root, 'deep/rooted.txt');
  put(root, 'build/out.js');
  put(root, 'src/build/also-ignored.js');
  put(root, 'src/.gitignore', '!important.log\nlocal-only/\n');
  put(root, 'src/important.log');
  put(root, 'src/other.log');
  put(root, 'src/local-only/x.txt');
  put(root, 'src/main.ts');
  assert.deepEqual(paths(root), [
    '.gitignore',
    'deep/rooted.txt',
    'keep.log',
    'src/.gitignore',
    'src/important.log',
    'src/main.ts',
  ]);
});

test('a file inside an ignored directory cannot be re-included (git semantics)', (t) => {
  const root = tempDir(t);
  put(root, '.gitignore', 'vendor/\n!vendor/keep.txt\n');
  put(root, 'vendor/keep.txt');
  put(root, 'main.ts');
  assert.deepEqual(paths(root), ['.gitignore', 'main.ts']);
});

test('paths sort by bytes, so a.txt comes before a/b', (t) => {
  const root = tempDir(t);
  put(root, 'a/b');
  put(root, 'a.txt');
  put(root, 'A');
  assert.deepEqual(paths(root), ['A', 'a.txt', 'a/b']);
});

test('the walk meets every path in byte order: directories whose names are prefixes, separators below "/", and non-ASCII names', (t) => {
  const root = tempDir(t);
  const files = [
    'a/x',
    'a-b',
    'a.txt',
    'a0',
    'ab/c',
    'ab/c.d/e',
    'ab/c-d',
    'ab/c0',
    'a b/z',
    'é/1',
    'e\u0301',
    'z',
    '日本/語',
    '😀/x',
    '\uff5e',
    'deep/a/b/c/d/e',
  ];
  for (const file of files) put(root, file);
  mkdirSync(join(root, 'empty-dir'));
  symlinkSync('a', join(root, 'a-link'));
  const got = paths(root);
  const byBytes = [...files, 'a-link'].sort((x, y) => Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8')));
  assert.deepEqual(got, byBytes);
});

test('an excluded data directory inside the workspace is skipped', (t) => {
  const root = tempDir(t);
  put(root, 'agentscm-data/native/lock');
  put(root, 'main.ts');
  assert.deepEqual(paths(root, { excludeDirs: [join(root, 'agentscm-data')] }), ['main.ts']);
});

test('the file-count bound: at the bound complete, one past incomplete', (t) => {
  const root = tempDir(t);
  for (let i = 0; i < 5; i++) put(root, `f${i}`);
  assert.equal(scanWorkspace(root, { bounds: { ...DEFAULT_SCAN_BOUNDS, maxFiles: 5 } }).complete, true);
  const over = scanWorkspace(root, { bounds: { ...DEFAULT_SCAN_BOUNDS, maxFiles: 4 } });
  assert.equal(over.complete, false);
  assert.match(over.problem ?? '', /more than 4 files/);
});

test('the single-file and total byte bounds: at the bound complete, one past incomplete', (t) => {
  const root = tempDir(t);
  put(root, 'a', '12345');
  put(root, 'b', '123');
  assert.equal(
    scanWorkspace(root, { bounds: { ...DEFAULT_SCAN_BOUNDS, maxFileBytes: 5, maxTotalBytes: 8 } }).complete,
    true,
  );
  const big = scanWorkspace(root, { bounds: { ...DEFAULT_SCAN_BOUNDS, maxFileBytes: 4 } });
  assert.equal(big.complete, false);
  assert.match(big.problem ?? '', /a has 5 bytes, more than 4/);
  const total = scanWorkspace(root, { bounds: { ...DEFAULT_SCAN_BOUNDS, maxTotalBytes: 7 } });
  assert.equal(total.complete, false);
  assert.match(total.problem ?? '', /more than 7 bytes/);
});

test('the 512-byte path bound: 512 is accepted, 513 makes the scan incomplete', (t) => {
  const root = tempDir(t);
  // Components of at most 255 bytes (the filesystem's own name limit).
  const dirs = `${'d'.repeat(200)}/${'e'.repeat(200)}`;
  const at = `${dirs}/${'f'.repeat(512 - dirs.length - 1)}`;
  assert.equal(at.length, 512);
  put(root, at);
  assert.deepEqual(paths(root), [at]);
  const past = `${dirs}/${'g'.repeat(513 - dirs.length - 1)}`;
  put(root, past);
  const scan = scanWorkspace(root);
  assert.equal(scan.complete, false);
  assert.match(scan.problem ?? '', /longer than 512 bytes/);
});

test('any valid UTF-8 name is recorded byte-exact: accented, CJK, emoji, NFC and NFD stay distinct, sorted by UTF-8 bytes', (t) => {
  const root = tempDir(t);
  const nfc = 'caf\u00e9.txt';
  const nfd = 'cafe\u0301.txt';
  const names = [
    'ok.txt',
    nfc,
    nfd,
    '\u6f22\u5b57/\u6587\u4ef6.md',
    'emoji-\u{1f600}.txt',
    'pua-\uff5e.txt',
    'back\\slash:colon.txt',
  ];
  for (const name of names) put(root, name, name);
  const scan = scanWorkspace(root);
  assert.equal(scan.complete, true, scan.problem ?? '');
  assert.equal(scan.problemCode, null);
  const got = scan.files.map((f) => f.path);
  // Sorted as UTF-8 bytes: an astral character (4 bytes, F0…) sorts after U+FF5E (EF…), unlike UTF-16 order.
  const byBytes = [...names].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  assert.deepEqual(got, byBytes);
  assert.ok(got.includes(nfc) && got.includes(nfd), 'the NFC and NFD spellings are two files');
  const nfdEntry = scan.files.find((f) => f.path === nfd);
  assert.deepEqual(
    Buffer.from(nfdEntry?.path ?? '', 'utf8'),
    Buffer.from('cafe\u0301.txt', 'utf8'),
    'no normalization',
  );
});

test('a name that is not UTF-8 makes the scan incomplete with WORKSPACE_PATH_NOT_UTF8; other refusals keep WORKSPACE_SCAN_INCOMPLETE', (t) => {
  const root = tempDir(t);
  put(root, 'ok.txt');
  mkdirSync(join(root, 'sub'));
  // Latin-1 "café" (0xE9 alone is not UTF-8), made through a Buffer path.
  writeFileSync(Buffer.concat([Buffer.from(join(root, 'sub/caf')), Buffer.from([0xe9]), Buffer.from('.txt')]), 'x');
  const scan = scanWorkspace(root);
  assert.equal(scan.complete, false);
  assert.equal(scan.problemCode, 'WORKSPACE_PATH_NOT_UTF8');
  assert.match(scan.problem ?? '', /"caf\\xe9\.txt" in "sub" is not valid UTF-8/);
  const other = tempDir(t);
  put(other, 'ok.txt');
  put(other, 'tab\tname.txt');
  const refused = scanWorkspace(other);
  assert.equal(refused.complete, false);
  assert.equal(refused.problemCode, 'WORKSPACE_SCAN_INCOMPLETE');
  assert.match(refused.problem ?? '', /control character 0x09/);
  put(other, '.gitignore', 'tab*\n');
  assert.deepEqual(paths(other), ['.gitignore', 'ok.txt']);
});

test('the 512-byte bound counts UTF-8 bytes, not characters', (t) => {
  const root = tempDir(t);
  // 100 × "é" is 100 characters and 200 bytes: three such components are 302 characters, 602 bytes.
  const e100 = '\u00e9'.repeat(100);
  const long = `${e100}/${e100}/${e100}`;
  assert.ok(long.length < 512 && Buffer.byteLength(long) > 512);
  put(root, long);
  const scan = scanWorkspace(root);
  assert.equal(scan.complete, false);
  assert.match(scan.problem ?? '', /longer than 512 bytes/);
});

test('environment bounds can only tighten the defaults', () => {
  assert.equal(scanBoundsFromEnv({ AGENTSCM_SCAN_MAX_FILES: '3' }).maxFiles, 3);
  assert.equal(scanBoundsFromEnv({ AGENTSCM_SCAN_MAX_FILES: '999999999' }).maxFiles, DEFAULT_SCAN_BOUNDS.maxFiles);
  assert.equal(scanBoundsFromEnv({ AGENTSCM_SCAN_MAX_FILES: '-1' }).maxFiles, DEFAULT_SCAN_BOUNDS.maxFiles);
  assert.equal(scanBoundsFromEnv({ AGENTSCM_SCAN_MAX_TOTAL_BYTES: '10' }).maxTotalBytes, 10);
});

test('names are read as text, and a directory where that replaced bytes is read again by its bytes', (t) => {
  const root = tempDir(t);
  // U+FFFD spelled in UTF-8 is a valid name; beside it, a name that is not UTF-8 (which text
  // decoding would also turn into U+FFFD) in the same directory, and a clean directory.
  put(root, 'd/\ufffd.txt');
  put(root, 'clean/a.txt');
  writeFileSync(Buffer.concat([Buffer.from(`${root}/d/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]), 'x');
  const scan = scanWorkspace(root);
  assert.deepEqual(
    scan.files.map((f) => f.path),
    ['clean/a.txt', 'd/\ufffd.txt'],
  );
  assert.equal(scan.problemCode, 'WORKSPACE_PATH_NOT_UTF8');
  assert.match(scan.problem ?? '', /caf\\xe9\.txt/);
  // Alone, the valid U+FFFD name is recorded and the scan is complete.
  const clean = tempDir(t);
  put(clean, '\ufffd');
  const alone = scanWorkspace(clean);
  assert.equal(alone.complete, true);
  assert.deepEqual(
    alone.files.map((f) => f.path),
    ['\ufffd'],
  );
});
