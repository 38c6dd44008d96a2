/**
 * SIGKILL in the middle of a checkpoint on revision trees: killed inside the authority
 * transaction, no tree row of the new revision remains (old state); killed after it, the trees
 * and the version are there and the next command adopts the staged stat cache (new state).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { cliEntryArgv, jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function killAt(point: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: point },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`agentscm-test-paused:${point}`)) child.kill('SIGKILL');
    });
    child.on('close', (_code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`did not pause at ${point}: ${stderr}`)),
    );
  });
}

function rows(dataDir: string): { trees: number; entries: number; revisions: number } {
  const db = new Database(join(dataDir, 'native', 'authority.sqlite'), { readonly: true });
  try {
    const n = (sql: string): number => db.prepare(sql).pluck().get() as number;
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    // Every entry names a stored blob or tree: nothing half-written.
    assert.equal(
      n(
        "SELECT count(*) FROM tree_entries e WHERE (e.kind = 'directory' AND NOT EXISTS (SELECT 1 FROM trees t WHERE t.rowid = e.object)) OR (e.kind <> 'directory' AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.rowid = e.object))",
      ),
      0,
    );
    return {
      trees: n('SELECT count(*) FROM trees'),
      entries: n('SELECT count(*) FROM tree_entries'),
      revisions: n('SELECT count(*) FROM revisions'),
    };
  } finally {
    db.close();
  }
}

for (const { point, committed } of [
  { point: 'checkpoint:in-authority-transaction', committed: false },
  { point: 'checkpoint:after-authority', committed: true },
]) {
  test(`SIGKILL at ${point} leaves the trees of the ${committed ? 'new' : 'old'} state only`, async (t) => {
    const root = tempDir(t);
    const ws = join(root, 'ws');
    const data = join(root, 'data');
    for (let d = 0; d < 4; d++) {
      mkdirSync(join(ws, `d${d}`), { recursive: true });
      for (let f = 0; f < 5; f++) writeFileSync(join(ws, `d${d}`, `f${f}`), `${d}${f}`);
    }
    assert.equal((await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'p', '--no-instructions'])).code, 0);
    const before = rows(data);
    writeFileSync(join(ws, 'd2', 'f3'), 'changed');
    await killAt(point, ['--data-dir', data, 'checkpoint', '--change', 'c', '--workspace', ws]);
    // The new revision writes two trees (d2 and the root) and a revision row, or nothing.
    assert.deepEqual(
      rows(data),
      committed ? { trees: before.trees + 2, entries: before.entries + 5 + 4, revisions: 2 } : before,
    );
    const next = await runCli(['--data-dir', data, 'checkpoint', '--change', 'c', '--workspace', ws, '--json']);
    assert.equal(next.code, 0, next.stderr);
    const result = jsonOf<{ created: boolean; reconciled: string; hashed_files: number }>(next);
    assert.deepEqual(
      { created: result.created, reconciled: result.reconciled },
      { created: !committed, reconciled: committed ? 'committed' : 'abandoned' },
    );
    assert.deepEqual(rows(data), { trees: before.trees + 2, entries: before.entries + 5 + 4, revisions: 2 });
    const status = jsonOf<{ clean: boolean; ready: boolean }>(await runCli(['status', '--workspace', ws, '--json']));
    assert.deepEqual(status, { ...status, clean: true, ready: true });
  });
}
