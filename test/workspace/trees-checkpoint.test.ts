/**
 * Checkpoints on revision trees, end to end through the CLI: a rename, a mode change, a
 * retargeted symlink and an empty directory each give the right revision, `revision diff`
 * names the change, and a one-file checkpoint writes only the trees on that file's path.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

interface Checkpoint {
  revision: string;
  created: boolean;
  previous_revision: string | null;
}

interface Diff {
  from: string;
  to: string;
  changes: { path: string; change: string; before: string | null; after: string | null }[];
}

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

test('rename, mode change, retargeted symlink and empty directory through checkpoint and revision diff', async (t) => {
  const root = tempDir(t);
  const ws = join(root, 'ws');
  const data = join(root, 'data');
  mkdirSync(join(ws, 'src'), { recursive: true });
  for (let d = 0; d < 3; d++) {
    mkdirSync(join(ws, `pkg${d}`));
    for (let f = 0; f < 5; f++) writeFileSync(join(ws, `pkg${d}`, `f${f}.txt`), `pkg ${d} file ${f}\n`);
  }
  writeFileSync(join(ws, 'src/old.ts'), 'export {};\n');
  writeFileSync(join(ws, 'run.sh'), '#!/bin/sh\n');
  symlinkSync('src/old.ts', join(ws, 'link'));
  const cli = (args: string[]): Promise<CliResult> => runCli(['--data-dir', data, ...args]);
  const init = jsonOf<{ revision: string }>(
    ok(await cli(['init-repo', ws, '--name', 'p', '--no-instructions', '--json'])),
  );
  const checkpoint = async (): Promise<Checkpoint> =>
    jsonOf<Checkpoint>(ok(await cli(['checkpoint', '--change', 'c', '--workspace', ws, '--json'])));
  const diff = async (a: string, b: string): Promise<Diff> =>
    jsonOf<Diff>(ok(await cli(['revision', 'diff', a, b, '--json'])));

  const treeRows = (): { trees: number; entries: number } => {
    const db = new Database(join(data, 'native', 'authority.sqlite'), { readonly: true });
    try {
      return {
        trees: db.prepare('SELECT count(*) FROM trees').pluck().get() as number,
        entries: db.prepare('SELECT count(*) FROM tree_entries').pluck().get() as number,
      };
    } finally {
      db.close();
    }
  };
  const start = treeRows();
  // root (pkg0-2, src, run.sh, link) + pkg0..2 + src.
  assert.deepEqual(start, { trees: 5, entries: 6 + 15 + 1 });

  renameSync(join(ws, 'src/old.ts'), join(ws, 'src/new.ts'));
  const renamed = await checkpoint();
  assert.equal(renamed.previous_revision, init.revision);
  assert.deepEqual((await diff(init.revision, renamed.revision)).changes, [
    { path: 'src/new.ts', change: 'added', before: null, after: 'file' },
    { path: 'src/old.ts', change: 'deleted', before: 'file', after: null },
  ]);
  // Only src and the root are new trees: pkg0..2 are shared.
  assert.deepEqual(treeRows(), { trees: start.trees + 2, entries: start.entries + 1 + 6 });

  chmodSync(join(ws, 'run.sh'), 0o755);
  const moded = await checkpoint();
  assert.deepEqual((await diff(renamed.revision, moded.revision)).changes, [
    { path: 'run.sh', change: 'modified', before: 'file', after: 'executable' },
  ]);

  unlinkSync(join(ws, 'link'));
  symlinkSync('src/new.ts', join(ws, 'link'));
  const retargeted = await checkpoint();
  assert.deepEqual((await diff(moded.revision, retargeted.revision)).changes, [
    { path: 'link', change: 'modified', before: 'symlink', after: 'symlink' },
  ]);
  const cat = ok(await cli(['revision', 'cat', retargeted.revision, 'link']));
  assert.equal(cat.stdout, 'src/new.ts');

  // An empty directory is not recorded: the tree is unchanged, so no new version.
  mkdirSync(join(ws, 'empty'));
  const same = await checkpoint();
  assert.deepEqual(
    { created: same.created, revision: same.revision },
    { created: false, revision: retargeted.revision },
  );
  // A file in it makes it a tree.
  writeFileSync(join(ws, 'empty/now.txt'), 'x');
  const filled = await checkpoint();
  assert.deepEqual((await diff(retargeted.revision, filled.revision)).changes, [
    { path: 'empty/now.txt', change: 'added', before: null, after: 'file' },
  ]);

  // Prefixes are accepted like the other revision commands; human output marks each path.
  const human = ok(await cli(['revision', 'diff', init.revision.slice(0, 8), filled.revision.slice(0, 10)]));
  assert.equal(
    human.stdout,
    [
      'A empty/now.txt (file)',
      'M link (symlink)',
      'M run.sh (file -> executable)',
      'A src/new.ts (file)',
      'D src/old.ts (file)',
      '',
    ].join('\n'),
  );
  const unknown = await cli(['revision', 'diff', init.revision, '0'.repeat(64), '--json']);
  assert.equal(unknown.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(unknown).error.code, 'REVISION_NOT_FOUND');
});
