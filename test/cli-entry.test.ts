import assert from 'node:assert/strict';
import test from 'node:test';

import { runCli } from './helpers/cli.js';

test('an unknown flag is a usage error with exit 2 and one stderr line', async () => {
  const result = await runCli(['--nonexistent-flag-xyz']);
  assert.equal(result.code, 2);
});

test('--data-dir without a value before the command is a usage error', async () => {
  const result = await runCli(['--data-dir']);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /^error\[USAGE\]: --data-dir needs a directory/);
});

test('--version prints the name and version', async () => {
  const result = await runCli(['--version']);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /^agentscm\/0\.1\.0 /);
});

test('missing required flags are one usage error that names every missing flag', async () => {
  const result = await runCli(['agent-task', 'claim']);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /^error\[USAGE\]: missing required flag --change; missing required flag --out; missing required flag --token-file; usage: agentscm agent-task claim --change ID .*; see `agentscm agent-task claim --help`\n$/,
  );
});
