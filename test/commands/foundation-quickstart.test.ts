import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { CLI_COMMAND, REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function quickstart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete merged.AGENTSCM_DATA_DIR;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(REPO_ROOT, 'examples', 'quickstart', 'run.sh')], {
      cwd: REPO_ROOT,
      env: merged,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
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
