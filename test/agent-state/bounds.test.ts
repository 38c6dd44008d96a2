/**
 * The bounds of the observer (docs/agent-state.md "What is observed"), each at its limit and one past, on
 * real files: 20 scopes, 1,000 files and 64 MiB for the scope snapshot, 20,000 paths for the
 * metadata guard; symlinks never followed and `.git` never read.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  GUARD_PATH_LIMIT,
  SCOPE_SNAPSHOT_LIMITS,
  snapshotChanges,
  takeMetadataGuard,
  takeScopeSnapshot,
} from '../../src/agent-state/fs-snapshot.js';
import { tempDir } from '../helpers/tmp.js';

function files(dir: string, count: number, prefix = 'f'): void {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(dir, `${prefix}${i}`), '');
}

test('scope snapshot: 20 scopes accepted, 21 past the bound', (t) => {
  const root = tempDir(t);
  const scopes = (n: number): string[] => Array.from({ length: n }, (_, i) => `s${i}`);
  assert.equal(SCOPE_SNAPSHOT_LIMITS.scopes, 20);
  assert.equal(takeScopeSnapshot(root, scopes(20)).complete, true);
  const past = takeScopeSnapshot(root, scopes(21));
  assert.equal(past.complete, false);
  assert.equal(past.problem, 'bound');
});

test('scope snapshot: 1,000 files accepted, 1,001 past the bound', (t) => {
  const root = tempDir(t);
  files(join(root, 'out'), 1000);
  const at = takeScopeSnapshot(root, ['out']);
  assert.equal(at.complete, true, at.detail ?? '');
  assert.equal(at.files, 1000);
  writeFileSync(join(root, 'out', 'one-more'), '');
  const past = takeScopeSnapshot(root, ['out']);
  assert.equal(past.complete, false);
  assert.equal(past.problem, 'bound');
});

test('scope snapshot: 64 MiB accepted, one byte more past the bound', (t) => {
  const root = tempDir(t);
  mkdirSync(join(root, 'out'));
  const big = join(root, 'out', 'big.bin');
  writeFileSync(big, '');
  truncateSync(big, 64 * 1024 * 1024);
  const at = takeScopeSnapshot(root, ['out']);
  assert.equal(at.complete, true, at.detail ?? '');
  assert.equal(at.bytes, 64 * 1024 * 1024);
  writeFileSync(join(root, 'out', 'x'), 'x');
  const past = takeScopeSnapshot(root, ['out']);
  assert.equal(past.complete, false);
  assert.equal(past.problem, 'bound');
});

test('metadata guard: 20,000 paths accepted, 20,001 past the bound; the write scopes and .git are not counted', (t) => {
  const root = tempDir(t);
  assert.equal(GUARD_PATH_LIMIT, 20_000);
  // 19,999 files in one directory + the directory itself = 20,000 paths outside the scope.
  files(join(root, 'many'), 19_999);
  files(join(root, 'scope'), 50);
  files(join(root, '.git'), 50);
  const at = takeMetadataGuard(root, ['scope']);
  assert.equal(at.complete, true, at.detail ?? '');
  assert.equal(at.entries.size, 20_000);
  writeFileSync(join(root, 'many', 'one-more'), '');
  const past = takeMetadataGuard(root, ['scope']);
  assert.equal(past.complete, false);
  assert.equal(past.problem, 'bound');
});

test('snapshots never follow a symlink and never read .git', (t) => {
  const root = tempDir(t);
  const outside = tempDir(t);
  files(join(outside, 'target'), 3);
  mkdirSync(join(root, 'scope'));
  symlinkSync(join(outside, 'target'), join(root, 'scope', 'link'));
  symlinkSync(join(outside, 'target'), join(root, 'linked'));
  files(join(root, 'scope', '.git'), 3);
  const before = takeScopeSnapshot(root, ['scope']);
  assert.deepEqual([...before.entries.keys()].sort(), ['scope', 'scope/link']);
  // A change behind the link is not seen; the link itself is.
  writeFileSync(join(outside, 'target', 'f0'), 'changed');
  assert.deepEqual(snapshotChanges(before, takeScopeSnapshot(root, ['scope'])), []);
  // A scope reached through a symlinked directory is refused, not followed.
  const through = takeScopeSnapshot(root, ['linked/f0']);
  assert.equal(through.complete, false);
  assert.equal(through.problem, 'symlink');
  const guard = takeMetadataGuard(root, ['scope']);
  assert.deepEqual([...guard.entries.keys()].sort(), ['linked']);
});
