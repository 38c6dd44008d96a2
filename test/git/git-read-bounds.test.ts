/**
 * The bounds of reading a git tree and of binding a git work tree (docs/git.md), each at the bound and one past
 * it: the scan bounds applied to a `git ls-tree -r -z -l` listing before any content is read, and the size bound
 * of `.git/info/exclude`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { isAgentscmError } from '../../src/contracts/errors.js';
import { parseLsTree } from '../../src/git/read-commit-tree.js';
import { DEFAULT_SCAN_BOUNDS, scanWorkspace, type ScanBounds } from '../../src/workspace/scan.js';
import { tempDir } from '../helpers/tmp.js';

const OID = 'e69de29bb2d1d6434b8b29ae775ad8c2d48c5391';

/** A listing as `git ls-tree -r -z -l` writes it. */
function listing(rows: readonly [mode: string, size: number, path: string][]): Buffer {
  return Buffer.from(
    rows
      .map(([mode, size, path]) => `${mode} ${mode === '160000' ? 'commit' : 'blob'} ${OID} ${size}\t${path}\0`)
      .join(''),
    'utf8',
  );
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isAgentscmError(error)) return error.code;
    throw error;
  }
  return 'ok';
}

test('every scan bound holds on a git listing at the bound and refuses one past it', () => {
  const bounds = (over: Partial<ScanBounds>): ScanBounds => ({ ...DEFAULT_SCAN_BOUNDS, ...over });
  const three = listing([
    ['100644', 10, 'a'],
    ['100755', 20, 'b'],
    ['120000', 5, 'c'],
  ]);
  assert.equal(parseLsTree(three, bounds({ maxFiles: 3 })).length, 3);
  assert.equal(
    code(() => parseLsTree(three, bounds({ maxFiles: 2 }))),
    'GIT_TREE_UNRECORDABLE',
  );
  assert.equal(
    code(() => parseLsTree(three, bounds({ maxFileBytes: 20 }))),
    'ok',
  );
  assert.equal(
    code(() => parseLsTree(three, bounds({ maxFileBytes: 19 }))),
    'GIT_TREE_UNRECORDABLE',
  );
  assert.equal(
    code(() => parseLsTree(three, bounds({ maxTotalBytes: 35 }))),
    'ok',
  );
  assert.equal(
    code(() => parseLsTree(three, bounds({ maxTotalBytes: 34 }))),
    'GIT_TREE_UNRECORDABLE',
  );
  const long = listing([['100644', 1, `d/${'x'.repeat(8)}`]]);
  assert.equal(
    code(() => parseLsTree(long, bounds({ maxPathBytes: 10 }))),
    'ok',
  );
  assert.equal(
    code(() => parseLsTree(long, bounds({ maxPathBytes: 9 }))),
    'GIT_TREE_UNRECORDABLE',
  );
  // Modes: the three git file modes map to the native kinds; a gitlink and anything else are refused.
  assert.deepEqual(
    parseLsTree(three, DEFAULT_SCAN_BOUNDS).map((e) => e.mode),
    ['file', 'executable', 'symlink'],
  );
  assert.equal(
    code(() => parseLsTree(listing([['160000', 0, 'sub']]), DEFAULT_SCAN_BOUNDS)),
    'GIT_SUBMODULE_UNSUPPORTED',
  );
  assert.equal(
    code(() => parseLsTree(listing([['100664', 0, 'old']]), DEFAULT_SCAN_BOUNDS)),
    'GIT_TREE_UNRECORDABLE',
  );
  assert.equal(
    code(() => parseLsTree(listing([['100644', 0, 'a\nb']]), DEFAULT_SCAN_BOUNDS)),
    'GIT_TREE_UNRECORDABLE',
  );
  const latin1 = Buffer.concat([Buffer.from(`100644 blob ${OID} 0\tcaf`), Buffer.from([0xe9, 0])]);
  assert.equal(
    code(() => parseLsTree(latin1, DEFAULT_SCAN_BOUNDS)),
    'GIT_TREE_UNRECORDABLE',
  );
});

test('.git/info/exclude is read up to the .gitignore size bound and refused one byte past it', (t) => {
  const root = tempDir(t, 'agentscm-git-bounds-');
  execFileSync('git', ['init', '-q', root]);
  writeFileSync(join(root, 'keep.txt'), 'k\n');
  writeFileSync(join(root, 'drop.tmp'), 'd\n');
  const text = '*.tmp\n';
  writeFileSync(join(root, '.git', 'info', 'exclude'), text);
  const at = { ...DEFAULT_SCAN_BOUNDS, maxIgnoreFileBytes: text.length };
  assert.deepEqual(
    scanWorkspace(root, { bounds: at }).files.map((f) => f.path),
    ['keep.txt'],
  );
  const past = { ...DEFAULT_SCAN_BOUNDS, maxIgnoreFileBytes: text.length - 1 };
  assert.equal(
    code(() => scanWorkspace(root, { bounds: past })),
    'WORKSPACE_EXCLUDE_INVALID',
  );
});
