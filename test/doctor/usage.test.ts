/**
 * A malformed `agentscm doctor` command line is USAGE (exit 2) and checks nothing: an empty path
 * (which would otherwise name the working directory), an unknown flag, a --workspace that is not
 * a workspace is WORKSPACE_NOT_FOUND (exit 4). Nothing is created.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const CASES: { args: string[]; code: string; exit: number; message: RegExp }[] = [
  { args: ['--state-dir', ''], code: 'USAGE', exit: 2, message: /--state-dir needs a path, not an empty value/ },
  { args: ['--token-file', ''], code: 'USAGE', exit: 2, message: /--token-file needs a path/ },
  { args: ['--docker-socket', ''], code: 'USAGE', exit: 2, message: /--docker-socket needs a path/ },
  { args: ['--workspace', ''], code: 'USAGE', exit: 2, message: /--workspace needs a path/ },
  { args: ['--bogus'], code: 'USAGE', exit: 2, message: /unknown flag "--bogus"/ },
];

test('a malformed doctor command line is refused before any check, and nothing is created', async (t) => {
  const root = tempDir(t, 'agentscm-doctor-');
  const dataDir = join(root, 'data');
  for (const { args, code, exit, message } of CASES) {
    const result = await runCli(['doctor', '--json', '--data-dir', dataDir, ...args], { env: { HOME: root } });
    assert.equal(result.code, exit, `${args.join(' ')}: ${result.stderr}`);
    const error = jsonOf<{ error: { code: string; message: string } }>(result).error;
    assert.equal(error.code, code, args.join(' '));
    assert.match(error.message, message);
    assert.equal(result.stderr.split('\n').filter((line) => line !== '').length, 1, result.stderr);
  }
  const notWorkspace = await runCli(['doctor', '--data-dir', dataDir, '--workspace', root], { env: { HOME: root } });
  assert.equal(notWorkspace.code, 4, notWorkspace.stderr);
  assert.match(notWorkspace.stderr, /^error\[WORKSPACE_NOT_FOUND\]: /);
  assert.deepEqual(readdirSync(root), []);
});
