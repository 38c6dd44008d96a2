/**
 * docs/cli.md "Choosing the data directory": --data-dir, then AGENTSCM_DATA_DIR, then the
 * store the enclosing workspace is bound to (for every command, reads included), then
 * $XDG_DATA_HOME/agentscm, else ~/.local/share/agentscm — never a directory in the project.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

function project(root: string): string {
  const dir = join(root, 'project');
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'src', 'main.ts'), 'export {};\n');
  return dir;
}

test('with nothing named, init-repo puts the store under $XDG_DATA_HOME/agentscm, not in the project', async (t) => {
  const root = tempDir(t);
  const dir = project(root);
  const env = { XDG_DATA_HOME: join(root, 'xdg'), HOME: join(root, 'home') };
  const init = jsonOf<{ data_dir: string; files: number }>(
    ok(await runCli(['init-repo', '--name', 'demo', '--json'], { cwd: dir, env })),
  );
  assert.equal(init.data_dir, join(root, 'xdg', 'agentscm'));
  assert.ok(existsSync(join(root, 'xdg', 'agentscm', 'native', 'authority.sqlite')));
  // The project holds no store: only its own files, the workspace state and what init-repo writes on purpose.
  assert.equal(existsSync(join(dir, 'agentscm-data')), false);
  assert.ok(readdirSync(dir).every((name) => !existsSync(join(dir, name, 'native', 'authority.sqlite'))));
  assert.ok(init.files >= 1);
});

test('without XDG_DATA_HOME (or with a relative one) the store is ~/.local/share/agentscm', async (t) => {
  const root = tempDir(t);
  const home = join(root, 'home');
  for (const xdg of [undefined, 'relative/xdg']) {
    const dir = join(root, `p-${String(xdg !== undefined)}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), 'a');
    const env = { XDG_DATA_HOME: xdg, HOME: home };
    const init = jsonOf<{ data_dir: string }>(
      ok(await runCli(['init-repo', '--name', `n${String(xdg !== undefined)}`, '--json'], { cwd: dir, env })),
    );
    assert.equal(init.data_dir, join(home, '.local', 'share', 'agentscm'));
  }
  assert.equal(existsSync(join(root, 'p-true', 'relative')), false);
});

test('every command run inside a bound workspace uses the store it is bound to, reads included', async (t) => {
  const root = tempDir(t);
  const dir = project(root);
  const store = join(root, 'elsewhere', 'store');
  const env = { XDG_DATA_HOME: join(root, 'xdg'), HOME: join(root, 'home') };
  ok(await runCli(['--data-dir', store, 'init-repo', dir, '--name', 'demo'], { env }));
  writeFileSync(join(dir, 'src', 'main.ts'), 'export const x = 1;\n');
  const sub = join(dir, 'src');
  // A write and several reads from a subdirectory, none naming the store.
  const checkpoint = jsonOf<{ revision: string }>(
    ok(await runCli(['checkpoint', '--change', 'fix-1', '--json'], { cwd: sub, env })),
  );
  const change = jsonOf<{ current_revision: string }>(
    ok(await runCli(['change', 'show', 'fix-1', '--json'], { cwd: sub, env })),
  );
  assert.equal(change.current_revision, checkpoint.revision);
  const shown = jsonOf<{ id: string }>(
    ok(await runCli(['revision', 'show', checkpoint.revision, '--json'], { cwd: sub, env })),
  );
  assert.equal(shown.id, checkpoint.revision);
  const policy = jsonOf<{ name: string }>(ok(await runCli(['policy', 'show', '--json'], { cwd: sub, env })));
  assert.equal(policy.name, 'demo');
  // Nothing was created in the per-user directory or the project.
  assert.equal(existsSync(join(root, 'xdg')), false);
  assert.equal(existsSync(join(dir, 'agentscm-data')), false);
});

test('AGENTSCM_DATA_DIR wins over the workspace binding, and --data-dir over AGENTSCM_DATA_DIR', async (t) => {
  const root = tempDir(t);
  const dir = project(root);
  const bound = join(root, 'bound');
  const other = join(root, 'other');
  ok(await runCli(['--data-dir', bound, 'init-repo', dir, '--name', 'demo']));
  const outside = join(root, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'b.txt'), 'b');
  ok(await runCli(['--data-dir', other, 'init-repo', outside, '--name', 'other']));
  const viaEnv = jsonOf<{ name: string }>(
    ok(await runCli(['policy', 'show', '--json'], { cwd: dir, env: { AGENTSCM_DATA_DIR: other } })),
  );
  assert.equal(viaEnv.name, 'other');
  const viaFlag = jsonOf<{ name: string }>(
    ok(
      await runCli(['--data-dir', bound, 'policy', 'show', '--json'], { cwd: dir, env: { AGENTSCM_DATA_DIR: other } }),
    ),
  );
  assert.equal(viaFlag.name, 'demo');
  const viaBinding = jsonOf<{ name: string }>(ok(await runCli(['policy', 'show', '--json'], { cwd: dir })));
  assert.equal(viaBinding.name, 'demo');
});
