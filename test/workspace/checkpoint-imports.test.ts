/**
 * What a checkpoint loads: an incremental checkpoint is bounded by start-up, so its module
 * graph must not pull in what only other commands need — the JSON schema validator (ajv),
 * which the collector's key-file decoder uses, is the large one (docs/workspace.md
 * "Performance").
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Run an ES module script from the repository root through tsx; its stdout is one JSON document. */
function runScript<T>(lines: readonly string[]): T {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', lines.join('\n')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as T;
}

test('loading the checkpoint and its scan loads no JSON schema validator', () => {
  const loaded = runScript<string[]>([
    "import './src/workspace/checkpoint.ts';",
    "import { createRequire } from 'node:module';",
    'process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));',
  ]);
  // The probe works: the checkpoint does load CommonJS packages (the SQLite binding).
  assert.ok(
    loaded.some((path) => path.includes('/node_modules/better-sqlite3/')),
    `loaded: ${loaded.join(', ')}`,
  );
  assert.deepEqual(
    loaded.filter((path) => path.includes('/node_modules/ajv/')),
    [],
  );
});

test('opening a database loads the SQLite addon by its path, not through the `bindings` search', () => {
  const { one, loaded } = runScript<{ one: unknown; loaded: string[] }>([
    "import { newDatabase } from './src/native/sqlite.ts';",
    "import { createRequire } from 'node:module';",
    "const db = newDatabase(':memory:');",
    "const one = db.prepare('SELECT 1 AS one').get();",
    'db.close();',
    'process.stdout.write(JSON.stringify({ one, loaded: Object.keys(createRequire(import.meta.url).cache) }));',
  ]);
  assert.deepEqual(one, { one: 1 });
  assert.ok(
    loaded.some((path) => path.endsWith('better_sqlite3.node')),
    `loaded: ${loaded.join(', ')}`,
  );
  assert.deepEqual(
    loaded.filter((path) => path.includes('/node_modules/bindings/')),
    [],
  );
});
