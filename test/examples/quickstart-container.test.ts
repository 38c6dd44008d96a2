/**
 * The quickstart with a container runtime: after the local flow it runs a command step in an
 * isolated container (checkpoint, `context create`, `skill-workflow run --docker`), and it ends
 * by printing the three commands a user runs next on their own repository. The path where the
 * runtime is missing (the step is skipped, with the reason) runs in test/install-tarball.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { CLI_COMMAND, REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';

before(async () => {
  await requireEngine();
});

function quickstart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete merged.AGENTSCM_DATA_DIR;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(REPO_ROOT, 'examples', 'quickstart', 'run.sh')], {
      cwd: REPO_ROOT,
      env: merged,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 400_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The three commands of the closing "Next" block, in order. */
function nextCommands(stdout: string): string[] {
  const block = stdout.slice(stdout.indexOf('\nNext, on your own repository'));
  assert.ok(block.startsWith('\nNext'), `no "Next" block in:\n${stdout.slice(-2000)}`);
  return block
    .split('\n')
    .filter((line) => /^ {2}agentscm /.test(line))
    .map((line) => line.trim());
}

test('the quickstart runs a command step in a container and ends with the three next commands', async (t) => {
  const dir = tempDir(t);
  const result = await quickstart({
    AGENTSCM_BIN: CLI_COMMAND,
    QUICKSTART_DIR: dir,
    QUICKSTART_DOCKER_SOCKET: DOCKER_SOCKET,
  });
  assert.equal(result.code, 0, `${result.stdout.slice(-4000)}\n${result.stderr}`);
  assert.doesNotMatch(result.stdout, /skipping the container step/);
  assert.match(
    result.stdout,
    /\$ agentscm .*context create --change quickstart-2 --runner skills\/container-check\/runner\.json/,
  );
  assert.match(result.stdout, /^[0-9a-f]{64}$/m, 'context create prints the context digest');
  assert.match(result.stdout, /\$ agentscm .*skill-workflow run quickstart-run-2 .* --docker \S+ --docker-socket \S+/);
  assert.match(result.stdout, /run quickstart-run-2 \(container-check\): completed/);
  assert.match(result.stdout, /ok {3}greeting \(command\) — outcome passed, exit 0/);
  assert.deepEqual(nextCommands(result.stdout), [
    'agentscm init-repo PATH/TO/PROJECT --name NAME',
    'agentscm status --workspace PATH/TO/PROJECT',
    'agentscm checkpoint --change CHANGE --workspace PATH/TO/PROJECT',
  ]);
  // The closing block is the last thing printed.
  assert.match(
    result.stdout,
    /Then bind a workflow to the checkpointed revision as above \(docs\/skill-workflows\.md\)\.\n$/,
  );
});
