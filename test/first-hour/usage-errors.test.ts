/**
 * docs/cli.md "Usage errors": a malformed command line is one `error[USAGE]` line naming the
 * flag or argument, with the command's usage line as the hint (and the same in --json).
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const CASES: readonly { args: string[]; message: string; usage: string }[] = [
  {
    args: ['change', 'show'],
    message: 'missing required argument ID',
    usage: 'agentscm change show ID [--repository ID_OR_NAME] [--data-dir DIR] [--json]',
  },
  {
    args: ['revision', 'show'],
    message: 'missing required argument REVISION',
    usage: 'agentscm revision show REVISION [--repository ID_OR_NAME] [--data-dir DIR] [--json]',
  },
  {
    args: ['checkpoint'],
    message: 'missing required flag --change',
    usage:
      'agentscm checkpoint --change ID [--workspace PATH] [--full] [--target NAME] [--repository ID_OR_NAME] ' +
      '[--from-git REV] [--git-repo PATH] [--data-dir DIR] [--json]',
  },
  {
    args: ['checkpoint', '--change', 'a', '--bogus'],
    message: 'unknown flag "--bogus"',
    usage: 'agentscm checkpoint --change ID',
  },
  {
    args: ['checkpoint', '--change', 'a', '--change', 'b'],
    message: '--change is given more than once',
    usage: 'agentscm checkpoint --change ID',
  },
  {
    args: ['revision', 'show', 'a', 'b', 'c'],
    message: 'unexpected arguments "b", "c"',
    usage: 'agentscm revision show REVISION',
  },
  {
    args: ['skill-workflow', 'resume', 'r1', '--max-steps', 'abc'],
    message: '--max-steps: expected an integer but received: abc',
    usage: 'agentscm skill-workflow resume RUN_ID [--max-steps N]',
  },
];

test('each malformed command line is one clean USAGE line with the usage line as hint', async (t) => {
  const data = tempDir(t);
  for (const c of CASES) {
    const result = await runCli(['--data-dir', data, ...c.args]);
    assert.equal(result.code, 2, `${c.args.join(' ')}: ${result.stderr}`);
    const lines = result.stderr.split('\n');
    assert.equal(lines.length, 2, `one line: ${result.stderr}`);
    const line = lines[0] ?? '';
    assert.ok(line.startsWith(`error[USAGE]: ${c.message}; usage: ${c.usage}`), `${c.args.join(' ')}:\n${line}`);
    assert.ok(
      line.endsWith(`; see \`agentscm ${c.args.slice(0, c.args[0] === 'checkpoint' ? 1 : 2).join(' ')} --help\``),
      line,
    );
    assert.doesNotMatch(line, /following error|See more help|Missing|\\t/);
  }
});

test('with --json the usage error is the error document on stdout as well', async (t) => {
  const data = tempDir(t);
  const result = await runCli(['--data-dir', data, 'agent-task', 'enroll', '--repository', 'x', '--json']);
  assert.equal(result.code, 2);
  const doc = jsonOf<{ error: { code: string; message: string; hint: string } }>(result);
  assert.equal(doc.error.code, 'USAGE');
  assert.equal(
    doc.error.message,
    'exactly one of the following must be provided: --public-key, --public-key-file; missing required flag ' +
      '--executor; missing required flag --step',
  );
  assert.match(
    doc.error.hint,
    /^usage: agentscm agent-task enroll --step ID --executor ID \[--repository ID_OR_NAME\] \[--profile ID\] \[--public-key HEX\] \[--public-key-file FILE\]/,
  );
});
