/**
 * The scan's lstat (src/workspace/lstat-fields.ts): the fs binding, read after a self-check,
 * gives exactly the numbers lstatSync gives for every kind of entry, the same error codes, and
 * the same scan as the lstatSync fallback.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { fileType, lstatFields, lstatFieldsFast, useLstatFallback } from '../../src/workspace/lstat-fields.js';
import { scanWorkspace } from '../../src/workspace/scan.js';
import { tempDir } from '../helpers/tmp.js';

/** A tree with one entry of every kind the scan meets, and times and sizes at the edges. */
function varietyTree(root: string): string[] {
  const names: string[] = [];
  const add = (rel: string, content: string | Buffer = 'x'): void => {
    writeFileSync(join(root, rel), content);
    names.push(rel);
  };
  add('plain.txt');
  add('empty', '');
  add('run.sh', '#!/bin/sh\n');
  chmodSync(join(root, 'run.sh'), 0o755);
  add('café-CJK-漢字-😀.txt', 'utf8 name');
  add('sparse.bin', '');
  truncateSync(join(root, 'sparse.bin'), 2 ** 33 + 7); // a size above 2^32
  add('old.txt');
  utimesSync(join(root, 'old.txt'), new Date('1969-07-20T20:17:40.123Z'), new Date('1969-07-20T20:17:40.123Z')); // before 1970
  add('fraction.txt');
  utimesSync(join(root, 'fraction.txt'), 1_700_000_000.123456, 1_700_000_000.987654);
  symlinkSync('plain.txt', join(root, 'link'));
  symlinkSync('/nonexistent/target', join(root, 'dangling'));
  names.push('link', 'dangling');
  mkdirSync(join(root, 'dir'));
  names.push('dir');
  execFileSync('mkfifo', [join(root, 'fifo')]);
  names.push('fifo');
  return names;
}

function kindOf(path: string): string {
  const stat = lstatSync(path);
  return stat.isFile() ? 'file' : stat.isDirectory() ? 'directory' : stat.isSymbolicLink() ? 'symlink' : 'other';
}

function errorCodeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
  return 'no error';
}

test('on this Node the scan reads the fs binding, and it gives lstatSync’s numbers for every kind of entry', (t) => {
  useLstatFallback(false);
  assert.equal(lstatFieldsFast(), true, 'the self-check accepted the binding');
  const root = tempDir(t);
  for (const rel of varietyTree(root)) {
    const path = join(root, rel);
    const stat = lstatSync(path);
    const got = { ...lstatFields(path) };
    assert.deepEqual(
      got,
      { mode: stat.mode, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino },
      rel,
    );
    assert.equal(fileType(got.mode), kindOf(path), rel);
  }
});

test('errors are lstatSync’s: a missing path, a path through a file, a NUL byte', (t) => {
  const root = tempDir(t);
  writeFileSync(join(root, 'file'), 'x');
  for (const path of [join(root, 'missing'), join(root, 'file', 'below'), join(root, 'nul\u0000name')]) {
    const expected = errorCodeOf(() => lstatSync(path));
    assert.notEqual(expected, 'no error');
    for (const fallback of [false, true]) {
      useLstatFallback(fallback);
      assert.equal(
        errorCodeOf(() => lstatFields(path)),
        expected,
        `${path} (fallback ${String(fallback)})`,
      );
    }
  }
  useLstatFallback(false);
});

test('the scan of a tree is the same through the binding and through the lstatSync fallback', (t) => {
  const root = tempDir(t);
  varietyTree(root);
  mkdirSync(join(root, 'dir', 'deeper'), { recursive: true });
  for (let i = 0; i < 50; i++) writeFileSync(join(root, 'dir', 'deeper', `f${i}`), String(i));
  const scans = [false, true].map((fallback) => {
    useLstatFallback(fallback);
    assert.equal(lstatFieldsFast(), !fallback);
    const scan = scanWorkspace(root);
    return {
      complete: scan.complete,
      problem: scan.problem,
      paths: scan.table.paths,
      modes: [...scan.table.modes],
      stats: [...scan.table.stats],
    };
  });
  useLstatFallback(false);
  assert.equal(scans[0]?.complete, false, 'the fifo and the 8 GiB file make the scan incomplete');
  assert.match(scans[0]?.problem ?? '', /fifo is neither a regular file/);
  assert.match(scans[0]?.problem ?? '', /sparse\.bin has 8589934599 bytes/);
  assert.equal(scans[0]?.paths.length, 58);
  assert.deepEqual(scans[0], scans[1]);
});

test('reading the binding prints no deprecation warning, even under --pending-deprecation --throw-deprecation', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const script =
    "import { lstatFieldsFast } from './src/workspace/lstat-fields.ts'; process.stdout.write(String(lstatFieldsFast()));";
  const result = spawnSync(
    process.execPath,
    ['--pending-deprecation', '--throw-deprecation', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, 'true');
  assert.doesNotMatch(result.stderr, /DEP0111|DeprecationWarning/);
});
