/**
 * Stores made before revision trees (docs/native-store.md "Stores made before revision trees"):
 * a writer refuses a store that holds flat-manifest revisions with STORE_REVISIONS_OUTDATED and
 * changes nothing (the store, its Changes and targets, the bound workspace); an old store with no
 * revision migrates; an old workspace stat cache is carried over into the one-row cache.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { AUTHORITY_MIGRATIONS } from '../../src/native/migrations/index.js';
import { openWritable, u64ToSql } from '../../src/native/sqlite.js';
import { nativePaths, openAuthority } from '../../src/native/store.js';
import { workspaceStatePaths } from '../../src/workspace/state-dir.js';
import { WORKSPACE_MIGRATIONS } from '../../src/workspace/state-migrations.js';
import { loadBaseEntries, openWorkspaceWritable } from '../../src/workspace/state.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const PREVIOUS_VERSION = 8;
const OLD_REVISION = 'a1'.repeat(32);
const REPOSITORY = 'b2'.repeat(16);

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** A store as the previous build left it: schema 8, one flat revision with its entries, a Change version and target main naming it. */
function previousStore(dataDir: string, withRevision: boolean): void {
  const paths = nativePaths(dataDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const db = openWritable(paths.db, AUTHORITY_MIGRATIONS.slice(0, PREVIOUS_VERSION), 'the previous store');
  try {
    assert.equal(db.pragma('user_version', { simple: true }), PREVIOUS_VERSION);
    if (withRevision) {
      const content = Buffer.from('hello\n');
      const blob = createHash('sha256').update(content).digest('hex');
      db.prepare('INSERT INTO repositories (id, name, seq) VALUES (?, ?, 1)').run(REPOSITORY, 'old');
      db.prepare('INSERT INTO policy_epochs (repository, epoch) VALUES (?, ?)').run(REPOSITORY, u64ToSql(1n));
      db.prepare('INSERT INTO blobs (digest, size, chunk_count, data) VALUES (?, ?, 0, ?)').run(
        blob,
        u64ToSql(6n),
        content,
      );
      const key = db
        .prepare('INSERT INTO revisions (id, parent, entry_count, total_bytes) VALUES (?, NULL, 1, ?)')
        .run(OLD_REVISION, u64ToSql(6n)).lastInsertRowid;
      db.prepare(
        "INSERT INTO revision_entries (revision, path, mode, size, blob) VALUES (?, 'a.txt', 'file', ?, ?)",
      ).run(key, u64ToSql(6n), blob);
      db.prepare('INSERT INTO repository_revisions (repository, revision, seq) VALUES (?, ?, 1)').run(
        REPOSITORY,
        OLD_REVISION,
      );
      db.prepare('INSERT INTO changes (repository, id, current_version, seq) VALUES (?, ?, ?, 1)').run(
        REPOSITORY,
        'fix-1',
        u64ToSql(1n),
      );
      db.prepare(
        'INSERT INTO change_versions (repository, change, version, revision, previous_revision, seq) VALUES (?, ?, ?, ?, NULL, 1)',
      ).run(REPOSITORY, 'fix-1', u64ToSql(1n), OLD_REVISION);
      db.prepare("INSERT INTO targets (repository, name, revision) VALUES (?, 'main', ?)").run(
        REPOSITORY,
        OLD_REVISION,
      );
    }
  } finally {
    db.close();
  }
  writeFileSync(paths.lock, 'agentscm native store v1\n', { mode: 0o600 });
}

/** A workspace as the previous build left it: schema 1, bound to dataDir at OLD_REVISION, its base in base_entries rows. */
function previousWorkspace(root: string, dataDir: string): void {
  const paths = workspaceStatePaths(root);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(root, 'a.txt'), 'hello\n');
  const db = openWritable(paths.db, WORKSPACE_MIGRATIONS.slice(0, 1), 'the previous workspace');
  try {
    db.prepare(
      "INSERT INTO workspace (singleton, state, repository, data_dir, base_revision, generation) VALUES (1, 'ready', ?, ?, ?, ?)",
    ).run(REPOSITORY, dataDir, OLD_REVISION, u64ToSql(1n));
    db.prepare(
      "INSERT INTO base_entries (path, mode, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid) VALUES ('a.txt', 'file', ?, ?, 6, 1.5, 2.5, 77, 1)",
    ).run(u64ToSql(6n), 'cd'.repeat(32));
    db.prepare(
      "INSERT INTO base_entries (path, mode, size, blob, st_size, st_mtime_ms, st_ctime_ms, st_ino, cache_valid) VALUES ('caf\u00e9', 'symlink', ?, ?, NULL, NULL, NULL, NULL, 0)",
    ).run(u64ToSql(1n), 'ef'.repeat(32));
  } finally {
    db.close();
  }
}

test('a store of flat revisions is refused with STORE_REVISIONS_OUTDATED by writers, and nothing changes: store, Changes, targets, workspace', async (t) => {
  const root = tempDir(t);
  const dataDir = join(root, 'data');
  const ws = join(root, 'ws');
  mkdirSync(ws);
  previousStore(dataDir, true);
  previousWorkspace(ws, join(root, 'data'));
  const paths = nativePaths(dataDir);
  const before = { store: sha256(paths.db), workspace: sha256(workspaceStatePaths(ws).db) };

  const checkpoint = await runCli([
    '--data-dir',
    dataDir,
    'checkpoint',
    '--change',
    'fix-1',
    '--workspace',
    ws,
    '--json',
  ]);
  assert.equal(checkpoint.code, 4, checkpoint.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(checkpoint).error.code, 'STORE_REVISIONS_OUTDATED');
  assert.match(checkpoint.stderr, /holds 1 revisions of the flat-manifest format/);
  mkdirSync(join(root, 'other'));
  writeFileSync(join(root, 'other', 'b.txt'), 'b\n');
  const init = await runCli(['--data-dir', dataDir, 'init-repo', join(root, 'other'), '--name', 'other', '--json']);
  assert.equal(jsonOf<{ error: { code: string } }>(init).error.code, 'STORE_REVISIONS_OUTDATED');
  const policy = await runCli(['--data-dir', dataDir, 'policy', 'bump', '--repository', 'old', '--json']);
  assert.equal(jsonOf<{ error: { code: string } }>(policy).error.code, 'STORE_REVISIONS_OUTDATED');
  // A reader does not migrate: it names the schema and the way to migrate.
  const list = await runCli(['--data-dir', dataDir, 'revision', 'list', '--json']);
  assert.equal(jsonOf<{ error: { code: string } }>(list).error.code, 'STORE_SCHEMA_UNSUPPORTED');

  assert.deepEqual(
    { store: sha256(paths.db), workspace: sha256(workspaceStatePaths(ws).db) },
    before,
    'no byte of the store or the workspace changed',
  );
  const db = new Database(paths.db, { readonly: true });
  try {
    assert.equal(db.pragma('user_version', { simple: true }), PREVIOUS_VERSION);
    assert.deepEqual(db.prepare('SELECT revision FROM change_versions').pluck().all(), [OLD_REVISION]);
    assert.deepEqual(db.prepare('SELECT revision FROM targets').pluck().all(), [OLD_REVISION]);
    assert.equal(db.prepare('SELECT count(*) FROM revision_entries').pluck().get(), 1);
  } finally {
    db.close();
  }
  const wsDb = new Database(workspaceStatePaths(ws).db, { readonly: true });
  try {
    assert.equal(
      wsDb.pragma('user_version', { simple: true }),
      1,
      'the workspace keeps the schema the previous build reads',
    );
  } finally {
    wsDb.close();
  }
});

test('a store of the previous schema with no revision migrates to trees', (t) => {
  const dataDir = tempDir(t);
  previousStore(dataDir, false);
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    assert.equal(auth.db.pragma('user_version', { simple: true }), AUTHORITY_MIGRATIONS.length);
    const tables = auth.db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('trees', 'tree_entries', 'revision_entries') ORDER BY name",
      )
      .pluck()
      .all();
    assert.deepEqual(tables, ['tree_entries', 'trees']);
  } finally {
    auth.close();
  }
});

test('a workspace of the previous schema keeps its stat cache (and a staged one) in the one-row cache', (t) => {
  const root = tempDir(t);
  previousWorkspace(root, join(root, 'data'));
  const ws = openWorkspaceWritable(root);
  try {
    const base = loadBaseEntries(ws);
    assert.deepEqual(
      [...base.values()],
      [
        {
          path: 'a.txt',
          mode: 'file',
          size: 6n,
          blob: 'cd'.repeat(32),
          stat: { size: 6, mtimeMs: 1.5, ctimeMs: 2.5, ino: 77 },
          cacheValid: true,
        },
        { path: 'caf\u00e9', mode: 'symlink', size: 1n, blob: 'ef'.repeat(32), stat: null, cacheValid: false },
      ],
    );
    const rows = ws.db.prepare('SELECT count(*) FROM stat_caches').pluck().get();
    assert.equal(rows, 1, 'one row for the whole cache');
  } finally {
    ws.close();
  }
});
