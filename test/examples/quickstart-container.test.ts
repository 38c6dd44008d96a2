/**
 * The quickstart with a container runtime: after the local flow it puts examples/node-project
 * under the gate with commands only (deps build, check add --deps npm, collector add, grant create),
 * lands a Change whose
 * `node --test` passed in a container, verifies its receipt offline, refuses a Change that adds a
 * failing test (target main does not move), and ends with the five commands a user runs on their
 * own repository. The path where the runtime is missing (the step is skipped, with the reason)
 * runs in test/install-tarball.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { CLI_COMMAND, REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';
import { NPM_ENV } from '../support/npm-deps.js';

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
      timeout: 900_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The commands of the closing "Next" block, in order, with continuation lines joined. */
function nextCommands(stdout: string): string[] {
  const block = stdout.slice(stdout.indexOf('\nNext, on your own repository'));
  assert.ok(block.startsWith('\nNext'), `no "Next" block in:\n${stdout.slice(-2000)}`);
  return block
    .replace(/ \\\n +/g, ' ')
    .split('\n')
    .filter((line) => /^ {2}agentscm /.test(line))
    .map((line) => line.trim());
}

/** The text between the step headed `==> HEADING` and the next step. */
function section(stdout: string, heading: string): string {
  const start = stdout.indexOf(`\n==> ${heading}`);
  assert.ok(start >= 0, `no step "${heading}" in:\n${stdout.slice(-2000)}`);
  const end = stdout.indexOf('\n==> ', start + 1);
  return stdout.slice(start, end < 0 ? undefined : end);
}

function json(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

test('the quickstart lands a checked Node change, verifies its receipt and refuses a failing one', async (t) => {
  const dir = tempDir(t);
  const result = await quickstart({
    AGENTSCM_BIN: CLI_COMMAND,
    QUICKSTART_DIR: dir,
    QUICKSTART_DOCKER_SOCKET: DOCKER_SOCKET,
    ...NPM_ENV,
  });
  const out = result.stdout;
  assert.equal(result.code, 0, `${out.slice(-4000)}\n${result.stderr}`);
  assert.doesNotMatch(out, /skipping the container step/);
  // No JSON written for agentscm by the script: every piece comes from a command.
  const script = readFileSync(join(REPO_ROOT, 'examples', 'quickstart', 'run.sh'), 'utf8');
  assert.doesNotMatch(script, /writeFileSync|runner\.json|profile install|context create/);

  // Set-up: the check, the collector and the grant, each one command.
  assert.match(out, /\$ bash bin\/build-node-image\.sh\n/);
  assert.match(
    out,
    /\$ agentscm .* deps build --workspace \S+\/node-project --lockfile package-lock\.json --image local\/node:20 /,
  );
  assert.match(out, /^\S+ agentscm-deps\/duration-kit:npm( \(reused\))?$/m, 'deps build names its image');
  const checkAdd =
    /\$ agentscm .* check add tests --workspace \S+\/node-project --image (\S+) --deps npm --memory 512m .*-- node --test\n/;
  assert.equal(checkAdd.exec(out)?.[1], 'local/node:20', 'check add runs node --test on the dependency image');
  assert.match(out, /target main requires tests\n/);
  assert.match(out, /\$ agentscm .* agent-task collector add --step tests --state-dir \S+\/collector-state /);
  assert.match(out, /installed collector profile [0-9a-f]{64}\n/);
  assert.match(out, /\$ agentscm .* grant create --repository node-project --actor me\/agent-1 --token-file /);

  // fix-1: checkpoint (its context printed), claim, collect → passed; admitted and landed.
  const fix1 = section(out, 'Change fix-1');
  assert.match(fix1, /\ncontext [0-9a-f]{64} \(step tests, recipe \.agentscm-checks\/tests\.runner\.json\)\n/);
  assert.match(fix1, /claimed task t-[0-9a-f]+ attempt a-[0-9a-f]+ \(fence 1\) for collection/);
  assert.match(fix1, /"outcome": "passed"/);
  const admission = section(out, 'Admission');
  const fix1Revision = /qualified: Change fix-1 at revision ([0-9a-f]{64})\n/.exec(admission)?.[1];
  assert.ok(fix1Revision, admission);
  const receipt = /\n {2}receipt ([0-9a-f]{64})\n/.exec(admission)?.[1];
  assert.ok(receipt, admission);
  assert.match(admission, new RegExp(`approved: Change fix-1 version 1 at revision ${fix1Revision} for target main`));
  assert.match(
    admission,
    new RegExp(`landed: Change fix-1 version 1 moved target main from [0-9a-f]{64} to ${fix1Revision}`),
  );
  assert.match(admission, new RegExp(`node-project \\([0-9a-f]{32}\\) {2}main {2}${fix1Revision} `));

  // The receipt, exported by Change and verified offline with the collector's key file.
  const offline = section(out, 'The receipt, checked offline');
  assert.match(offline, new RegExp(`exported receipt ${receipt} to \\S+/fix-1\\.agscmrb`));
  assert.match(offline, /\$ agentscm receipt verify \S+\/fix-1\.agscmrb --public-key-file \S+\/signing-key\.json\n/);
  assert.match(offline, new RegExp(`verified: receipt ${receipt} \\(completed\\), 1 signed transfer`));
  assert.match(offline, /every registration key is one of the pinned --public-key values/);

  // fix-2 adds a failing test: collected as failed, not qualified, approve and land refused.
  const fix2 = section(out, 'Change fix-2 adds a failing test');
  assert.match(fix2, /"outcome": "failed"/);
  assert.match(fix2, /"exit_code": 1/);
  assert.match(fix2, /not qualified: Change fix-2 at revision [0-9a-f]{64}\n/);
  assert.match(fix2, /error\[ADMISSION_NOT_QUALIFIED\]: Change fix-2 /);
  assert.match(fix2, /error\[APPROVAL_NOT_FOUND\]: Change fix-2 /);
  assert.match(fix2, new RegExp(`refused: target main of node-project is still at ${fix1Revision}\n`));

  // The store agrees: main is at fix-1's revision, and fix-2's outcome is recorded as failed.
  const cli = CLI_COMMAND.split(' ');
  const targets = await runCli(cli, ['--data-dir', join(dir, 'agentscm-data'), 'target', 'list', '--json']);
  const main = (json(targets).targets as { repository_name: string; name: string; revision: string }[]).find(
    (target) => target.repository_name === 'node-project' && target.name === 'main',
  );
  assert.equal(main?.revision, fix1Revision, targets);
  const refused = await runCli(
    cli,
    [
      '--data-dir',
      join(dir, 'agentscm-data'),
      'qualification',
      '--change',
      'fix-2',
      '--repository',
      'node-project',
      '--json',
    ],
    1,
  );
  assert.equal(json(refused).qualified, false, refused);

  assert.deepEqual(nextCommands(out), [
    'agentscm init-repo PATH/TO/PROJECT --name NAME',
    'agentscm check add tests --workspace PATH/TO/PROJECT --image IMAGE -- COMMAND ARGS',
    'agentscm agent-task collector add --step tests --state-dir ~/.agentscm-collector',
    'agentscm grant create --actor OWNER/AGENT --token-file ~/.agentscm/agent-1.token',
    'agentscm install-stop --client claude-code --mode stop --change CHANGE --workspace PATH/TO/PROJECT ' +
      '--repo PATH/TO/PROJECT --docker "$(command -v docker)" --docker-socket /var/run/docker.sock',
  ]);
  // The closing block is the last thing printed.
  assert.match(out, /runs the checks when the agent stops \(docs\/stop-hooks\.md\)\.\n$/);
});

/** Runs the CLI from the checkout; resolves its stdout when it exits with `code`. */
function runCli(cli: string[], args: string[], code = 0): Promise<string> {
  const [exe = 'node', ...rest] = cli;
  return new Promise((resolve, reject) => {
    const child = spawn(exe, [...rest, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (exit) => {
      if (exit === code) resolve(stdout);
      else reject(new Error(`exit ${exit} (expected ${code}): ${args.join(' ')}\n${stdout}\n${stderr}`));
    });
  });
}
