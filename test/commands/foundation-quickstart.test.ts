import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { CLI_COMMAND, REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { spawned } from '../support/spawned.js';

function quickstart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete merged.AGENTSCM_DATA_DIR;
  return spawned('bash', [join(REPO_ROOT, 'examples', 'quickstart', 'run.sh')], { cwd: REPO_ROOT, env: merged });
}

// As `npm run quickstart` runs it: bin/run.js over the bundle in dist/ (`npm test` builds first).
test('the quickstart runs end to end with the built CLI', async (t) => {
  const dir = tempDir(t);
  const result = await quickstart({ QUICKSTART_DIR: dir });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /\$ agentscm .*init-repo/);
  assert.match(result.stdout, /modified src\/greet\.js/);
  assert.match(result.stdout, /Change quickstart-1 version 1/);
  assert.match(result.stdout, /Welcome to agentscm/);
  assert.match(result.stdout, /quickstart finished/);
  assert.ok(existsSync(join(dir, 'agentscm-data', 'native', 'lock')));
  if (!/skipping the container step/.test(result.stdout)) {
    // With an engine the second half runs: fix-1 lands, fix-2 (a failing test) is refused.
    assert.match(result.stdout, /landed: Change fix-1 version 1 moved target main /);
    assert.match(result.stdout, /refused: target main of node-project is still at [0-9a-f]{64}\n/);
  }
});

// A named image that is not in the engine skips the second half with the reason, before any
// image build, copy or registration, and the script still ends with the next commands.
test('the quickstart skips the container half when QUICKSTART_IMAGE names a missing image', async (t) => {
  const dir = tempDir(t);
  const result = await quickstart({
    AGENTSCM_BIN: CLI_COMMAND,
    QUICKSTART_DIR: dir,
    QUICKSTART_DOCKER: '/bin/true',
    QUICKSTART_IMAGE: 'local/absent-image:1',
  });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /Change quickstart-1 version 1/);
  const skipped = /skipping the container step: (.*)\n/.exec(result.stdout)?.[1] ?? '';
  if (!skipped.startsWith('image ')) {
    assert.match(skipped, /socket|does not answer/, 'only a missing engine may skip it for another reason');
    return;
  }
  assert.equal(
    skipped,
    'image local/absent-image:1 is not present in the engine (nothing is pulled; unset QUICKSTART_IMAGE to build local/node:20)',
  );
  assert.doesNotMatch(
    result.stdout.slice(0, result.stdout.indexOf('quickstart finished')),
    /build-node-image|check add|node-project/,
  );
  assert.ok(!existsSync(join(dir, 'node-project')));
  assert.match(result.stdout, /\n {2}agentscm check add tests /);
});

test('the quickstart stops with a non-zero status when a step fails', async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'demo-repo'));
  const occupied = await quickstart({ AGENTSCM_BIN: CLI_COMMAND, QUICKSTART_DIR: dir });
  assert.equal(occupied.code, 2);
  const broken = await quickstart({ AGENTSCM_BIN: 'false', QUICKSTART_DIR: join(dir, 'fresh') });
  assert.notEqual(broken.code, 0);
  assert.doesNotMatch(broken.stdout, /quickstart finished/);
});
