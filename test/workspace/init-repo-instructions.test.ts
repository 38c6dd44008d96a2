/**
 * `init-repo` says which instruction files it wrote (docs/workspace.md "Commands"): one line per
 * file with what was done to it, and `instruction_files: [{path, action}]` in --json; nothing
 * listed with --no-instructions. Run as a user runs it, against a real store.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { INSTRUCTION_BLOCK } from '../../src/workspace/instruction-block.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function project(t: test.TestContext, name: string): { dataDir: string; ws: string } {
  const dir = tempDir(t);
  const ws = join(dir, name);
  mkdirSync(ws);
  writeFileSync(join(ws, 'README.md'), 'hello\n');
  return { dataDir: join(dir, 'data'), ws };
}

test('init-repo prints each instruction file it wrote and what it did, after the summary', async (t) => {
  const { dataDir, ws } = project(t, 'demo');
  writeFileSync(join(ws, 'AGENTS.md'), '# Notes\n');
  mkdirSync(join(ws, '.github'));
  // A file that already holds the current block is kept as it is.
  writeFileSync(join(ws, '.github', 'copilot-instructions.md'), INSTRUCTION_BLOCK);
  const result = await runCli(['--data-dir', dataDir, 'init-repo', ws, '--name', 'demo']);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split('\n');
  assert.deepEqual(lines.slice(-3), [
    '  wrote AGENTS.md (managed block appended)',
    '  wrote .cursor/rules/agentscm.mdc (new file with the managed block)',
    '  kept .github/copilot-instructions.md (managed block already current)',
  ]);
  assert.match(readFileSync(join(ws, 'AGENTS.md'), 'utf8'), /^# Notes\n\n<!-- agentscm:begin/);
});

test('init-repo --json lists instruction_files with the action for each; a replaced block says so', async (t) => {
  const { dataDir, ws } = project(t, 'demo');
  writeFileSync(
    join(ws, 'AGENTS.md'),
    '<!-- agentscm:begin managed block (old) -->\nold text\n<!-- agentscm:end managed block -->\nkept\n',
  );
  const result = await runCli(['--data-dir', dataDir, 'init-repo', ws, '--name', 'demo', '--json']);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(jsonOf<{ instruction_files: unknown }>(result).instruction_files, [
    { path: 'AGENTS.md', action: 'replaced' },
    { path: '.cursor/rules/agentscm.mdc', action: 'created' },
    { path: '.github/copilot-instructions.md', action: 'created' },
  ]);
  assert.match(readFileSync(join(ws, 'AGENTS.md'), 'utf8'), /agentscm:end managed block -->\nkept\n$/);
});

test('init-repo --no-instructions lists none and says so', async (t) => {
  const { dataDir, ws } = project(t, 'demo');
  const json = await runCli(['--data-dir', dataDir, 'init-repo', ws, '--name', 'demo', '--no-instructions', '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(jsonOf<{ instruction_files: unknown }>(json).instruction_files, []);
  const other = project(t, 'other');
  const human = await runCli([
    '--data-dir',
    other.dataDir,
    'init-repo',
    other.ws,
    '--name',
    'other',
    '--no-instructions',
  ]);
  assert.equal(human.code, 0, human.stderr);
  assert.equal(human.stdout.trimEnd().split('\n').at(-1), '  instruction files not written (--no-instructions)');
  assert.doesNotMatch(human.stdout, /wrote|kept/);
});
