/** `agentscm help [COMMAND…]` and `-h` print exactly what `--help` prints (docs/cli.md "Help"). */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { helpAsFlag } from '../../src/commands/_leading-flags.js';
import { runCli } from '../helpers/cli.js';

const CASES: readonly (readonly string[])[] = [[], ['policy'], ['agent-task', 'claim'], ['revision', 'show']];

test('help WORDS, WORDS -h and WORDS --help print the same help', async () => {
  for (const words of CASES) {
    const reference = await runCli([...words, '--help']);
    assert.equal(reference.code, 0, reference.stderr);
    assert.ok(reference.stdout.length > 0);
    for (const args of [
      ['help', ...words],
      [...words, '-h'],
    ]) {
      const result = await runCli(args);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, reference.stdout, args.join(' '));
    }
  }
});

test('help of an unknown command is the unknown-command usage error', async () => {
  const result = await runCli(['help', 'frob']);
  assert.equal(result.code, 2);
  assert.equal(result.stderr, 'error[USAGE]: unknown command "frob"; run `agentscm --help` for the commands\n');
});

test('helpAsFlag: only -h before --, and help only as the first word', () => {
  assert.deepEqual(helpAsFlag(['help', 'agent-task', 'claim']), ['agent-task', 'claim', '--help']);
  assert.deepEqual(helpAsFlag(['help']), ['--help']);
  assert.deepEqual(helpAsFlag(['policy', 'show', '-h']), ['policy', 'show', '--help']);
  assert.deepEqual(helpAsFlag(['revision', 'cat', 'R', '--', '-h']), ['revision', 'cat', 'R', '--', '-h']);
  assert.deepEqual(helpAsFlag(['help', 'policy', '--', 'x']), ['policy', '--help', '--', 'x']);
  assert.deepEqual(helpAsFlag(['change', 'show', 'help']), ['change', 'show', 'help']);
});
