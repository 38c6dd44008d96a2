/** Long operations report progress on stderr (with AGENTSCM_PROGRESS=1 or a terminal), never on stdout. */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, REPO_ROOT, runCli } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

test('init-repo and checkpoint print progress on stderr only when asked, and --json stdout stays one document', async (t) => {
  const root = tempDir(t);
  const workspace = join(root, 'demo');
  cpSync(join(REPO_ROOT, 'examples', 'demo-repo'), workspace, { recursive: true });
  const data = join(root, 'data');
  const env = { AGENTSCM_PROGRESS: '1' };

  const init = await runCli(['--data-dir', data, 'init-repo', workspace, '--name', 'demo', '--json'], { env });
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stderr, /^scanning .*\nscanned \d+ files/m);
  assert.match(init.stderr, /stored \d+ files; recording the first revision/);
  assert.equal(typeof jsonOf<{ revision: string }>(init).revision, 'string');

  writeFileSync(join(workspace, 'src', 'greet.js'), 'export const greet = () => "changed";\n');
  const quiet = await runCli(['--data-dir', data, 'checkpoint', '--change', 'c1', '--workspace', workspace, '--json']);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.equal(quiet.stderr, '', 'no progress lines when stderr is not a terminal and AGENTSCM_PROGRESS is unset');

  writeFileSync(join(workspace, 'src', 'greet.js'), 'export const greet = () => "changed again";\n');
  const loud = await runCli(['--data-dir', data, 'checkpoint', '--change', 'c1', '--workspace', workspace, '--json'], {
    env,
  });
  assert.equal(loud.code, 0, loud.stderr);
  assert.match(loud.stderr, /hashed 1 of \d+ files; 1 changed path; recording/);
  assert.equal(jsonOf<{ version: number }>(loud).version, 2);
});
