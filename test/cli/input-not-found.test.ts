/**
 * A missing input file is INPUT_NOT_FOUND (exit 2): one line naming the path and what to pass,
 * the same error document with --json, and nothing created (docs/cli.md "File arguments and stdin").
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

test('every reader of an input file refuses a missing one with INPUT_NOT_FOUND', async (t) => {
  const root = tempDir(t, 'agentscm-input-missing-');
  const data = join(root, 'data');
  const missing = join(root, 'nope', 'missing.json');
  const cases: { args: string[]; hint: RegExp }[] = [
    { args: ['skill-workflow', 'plan', missing], hint: /workflow definition file/ },
    { args: ['requirement', 'install', missing, '--target', 'main'], hint: /workflow definition file/ },
    { args: ['agent-task', 'profile', 'install', missing], hint: /CollectorProfile/ },
    { args: ['agent-task', 'observation-digest', missing], hint: /TaskResultAssertion/ },
    { args: ['agent-task', 'transfer', 'show', missing], hint: /envelope file/ },
    { args: ['receipt', 'verify', missing], hint: /receipt export/ },
    { args: ['agent-state', 'validate', missing], hint: /input JSON file/ },
    {
      args: ['agent-task', 'call', 'qualification', '--token-file', missing, '--input', missing],
      hint: /grant create|request JSON/,
    },
  ];
  for (const { args, hint } of cases) {
    const result = await runCli(['--data-dir', data, ...args, '--json']);
    const what = args.slice(0, 3).join(' ');
    assert.equal(result.code, 2, `${what}: ${result.stderr}`);
    assert.match(result.stderr, /^error\[INPUT_NOT_FOUND\]: .* does not exist; nothing was read; /, what);
    assert.ok(result.stderr.includes(JSON.stringify(missing)), `${what} names the path: ${result.stderr}`);
    assert.match(result.stderr, hint, what);
    assert.equal(result.stderr.split('\n').length, 2, what);
    assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, 'INPUT_NOT_FOUND');
  }
  // Nothing was created: no data directory, nothing beside the test's own directory.
  assert.deepEqual(readdirSync(root), []);
});
