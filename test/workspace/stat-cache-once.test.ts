/**
 * The stat cache is written once per operation (docs/workspace.md "Stat cache"): the pending
 * operation inserts the new cache as a row of its own, adopting it moves the workspace's pointer
 * to that row (no copy), dropping it removes the row; workspace schema step 3 carries the two
 * slots of step 2 (base and staged) over as they are.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import test from 'node:test';

import { openWritable, u64ToSql } from '../../src/native/sqlite.js';
import { encodeStatCache, type CachedEntry } from '../../src/workspace/stat-cache.js';
import { workspaceStatePaths } from '../../src/workspace/state-dir.js';
import { WORKSPACE_MIGRATIONS } from '../../src/workspace/state-migrations.js';
import {
  abandonPending,
  commitPending,
  createWorkspaceDb,
  loadBaseCache,
  loadBaseEntries,
  openWorkspaceWritable,
  readWorkspaceRecord,
  workspaceWrite,
  writeBindingRecord,
  writePending,
  type PendingOperation,
  type WorkspaceDb,
} from '../../src/workspace/state.js';
import { tempDir } from '../helpers/tmp.js';

const REPOSITORY = 'b2'.repeat(16);
const REVISION = 'a1'.repeat(32);
const NEXT = 'c3'.repeat(32);

function cacheOf(path: string, digit: string): CachedEntry[] {
  return [
    {
      path,
      mode: 'file',
      size: 1n,
      blob: digit.repeat(64),
      stat: { size: 1, mtimeMs: 1.5, ctimeMs: 2.5, ino: 3 },
      cacheValid: true,
    },
  ];
}

function pointers(ws: WorkspaceDb): { base: number | null; pending: number | null; rows: number[] } {
  const row = ws.db
    .prepare('SELECT base_cache AS base, pending_cache AS pending FROM workspace WHERE singleton = 1')
    .get() as { base: number | null; pending: number | null };
  return { ...row, rows: ws.db.prepare('SELECT id FROM stat_caches ORDER BY id').pluck().all() as number[] };
}

const pending = (revision: string): PendingOperation => ({
  kind: 'checkpoint',
  change: 'c',
  expected_version: null,
  revision,
  parent: REVISION,
  started_ms: 1,
});

test('a pending operation writes its stat cache once: adopting it moves the pointer, dropping it removes the row', (t) => {
  const root = tempDir(t);
  const ws = createWorkspaceDb(root);
  t.after(() => ws.close());
  workspaceWrite(ws, () => {
    writeBindingRecord(ws, { repository: REPOSITORY, data_dir: '/data' });
    writePending(ws, { ...pending(REVISION), kind: 'init', change: null, parent: null }, cacheOf('a', '1'));
    commitPending(ws, REVISION, 1n);
  });
  const first = pointers(ws);
  assert.deepEqual(first.rows, [first.base]);

  workspaceWrite(ws, () => writePending(ws, pending(NEXT), encodeStatCache(cacheOf('b', '2'))));
  const staged = pointers(ws);
  assert.equal(staged.base, first.base);
  assert.notEqual(staged.pending, null);
  assert.deepEqual(staged.rows, [first.base, staged.pending]);
  // The base is still the old cache until the operation is adopted.
  assert.deepEqual([...loadBaseEntries(ws).keys()], ['a']);

  workspaceWrite(ws, () => commitPending(ws, NEXT, 2n));
  const adopted = pointers(ws);
  assert.equal(adopted.base, staged.pending, 'the row the pending operation wrote is the base now');
  assert.equal(adopted.pending, null);
  assert.deepEqual(adopted.rows, [staged.pending]);
  assert.deepEqual([...loadBaseEntries(ws).keys()], ['b']);
  assert.equal(readWorkspaceRecord(ws)?.base_revision, NEXT);

  workspaceWrite(ws, () => writePending(ws, pending(REVISION), cacheOf('c', '3')));
  workspaceWrite(ws, () => writePending(ws, pending(REVISION), cacheOf('d', '4')));
  assert.equal(pointers(ws).rows.length, 2, 'a second pending cache replaces the first');
  workspaceWrite(ws, () => abandonPending(ws));
  assert.deepEqual(pointers(ws), { base: adopted.base, pending: null, rows: [adopted.base as number] });
  assert.ok(loadBaseCache(ws).equals(encodeStatCache(cacheOf('b', '2'))));
});

test('workspace schema step 3 carries the base and the staged stat cache of step 2 over', (t) => {
  const root = tempDir(t);
  const paths = workspaceStatePaths(root);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const db = openWritable(paths.db, WORKSPACE_MIGRATIONS.slice(0, 2), 'the previous workspace');
  try {
    db.prepare(
      "INSERT INTO workspace (singleton, state, repository, data_dir, base_revision, generation, pending_kind, pending_change, pending_revision, pending_parent, pending_started_ms) VALUES (1, 'ready', ?, '/data', ?, ?, 'checkpoint', 'c', ?, ?, 1)",
    ).run(REPOSITORY, REVISION, u64ToSql(1n), NEXT, REVISION);
    db.prepare("INSERT OR REPLACE INTO stat_cache (slot, data) VALUES ('base', ?), ('staged', ?)").run(
      encodeStatCache(cacheOf('a', '1')),
      encodeStatCache(cacheOf('b', '2')),
    );
  } finally {
    db.close();
  }
  const ws = openWorkspaceWritable(root);
  t.after(() => ws.close());
  assert.equal(ws.db.pragma('user_version', { simple: true }), WORKSPACE_MIGRATIONS.length);
  assert.deepEqual([...loadBaseEntries(ws).keys()], ['a']);
  const { base, pending: staged } = pointers(ws);
  assert.notEqual(staged, null);
  assert.ok(
    (ws.db.prepare('SELECT data FROM stat_caches WHERE id = ?').pluck().get(staged) as Buffer).equals(
      encodeStatCache(cacheOf('b', '2')),
    ),
  );
  // The pending operation still reconciles onto the staged cache.
  workspaceWrite(ws, () => commitPending(ws, NEXT, 2n));
  assert.deepEqual([...loadBaseEntries(ws).keys()], ['b']);
  assert.deepEqual(pointers(ws).rows, [staged as number]);
  assert.notEqual(base, staged);
});
