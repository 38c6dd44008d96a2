/**
 * `--repository` on every command that reads a repository (docs/cli.md "Choosing the
 * repository"), checked against the manifest so a new command cannot forget it; its behaviour
 * with two repositories in one store for the commands whose repository is fixed by a grant, a
 * workspace or a collector descriptor; and `skill-workflow run` with no runtime flags
 * (docs/skill-workflows.md "Command steps at run time").
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE, type Scenario } from '../helpers/scenario.js';
import { tempDir } from '../helpers/tmp.js';
import { IMAGE } from '../support/runtime.js';

/**
 * Commands that take --data-dir but read no repository a user could name, each with the reason.
 * A command missing from this list must take --repository.
 */
const READS_NO_REPOSITORY: Readonly<Record<string, string>> = {
  // The agent-state contract is independent of the store's repositories.
  'agent-state:conflicts': 'agent-state envelopes only',
  'agent-state:create': 'agent-state envelopes only',
  'agent-state:edit-hook': 'agent-state envelopes only',
  'agent-state:eligible': 'agent-state envelopes only',
  'agent-state:reconcile': 'agent-state envelopes only',
  'agent-state:run': 'agent-state envelopes only',
  'agent-state:validate': 'agent-state envelopes only',
  // Files and keys of the collector host, no repository.
  'agent-task:key': 'writes a key file',
  'agent-task:observation-digest': 'digests bytes',
  'agent-task:runtime-probe': 'probes the container runtime',
  'agent-task:sign-observation': 'signs a file',
  'agent-task:verify-observation': 'verifies a file',
  'agent-task:transfer:show': 'decodes an envelope file',
  'deps:build': 'builds an image from a lockfile through the engine',
  // The record named on the command line binds its repository (IDs are store-wide).
  'agent-task:profile:install': 'the profile file names its repository_id',
  'agent-task:profile:show': 'a profile ID',
  'agent-task:revoke': 'a registration ID',
  'agent-task:retry-upload': 'a retained envelope in --state-dir',
  'agent-task:upload': 'an envelope file',
  'grant:revoke': 'a grant ID',
  'grant:rotate': 'a grant ID',
  'check-command-show': 'a command attempt ID',
  'receipt:show': 'a receipt digest',
  'receipt:verify': 'a bundle file',
  'skill-workflow:cancel': 'a run ID; the run binds its repository',
  'skill-workflow:recover': 'a run ID; the run binds its repository',
  'skill-workflow:resume': 'a run ID; the run binds its repository',
  'skill-workflow:status': 'a run ID; the run binds its repository',
  // Whole-store or host-wide commands.
  'hub:serve': 'serves every repository of the store',
  doctor: 'checks the whole store, hooks and runtime',
  'init-repo': 'creates a repository (--name)',
  'install-edit-hook': "writes a client's hook settings",
  'instructions:write': 'writes instruction files into the workspace, no store',
  // Workspace-bound hooks and writers: the workspace (--workspace) decides the repository.
  'skill-workflow:stop': 'a Stop hook; install-stop writes its command line for one workspace',
};

interface ManifestCommand {
  readonly flags: Readonly<Record<string, unknown>>;
}

function manifestCommands(): Record<string, ManifestCommand> {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, ManifestCommand>;
  };
  return manifest.commands;
}

test('every command with --data-dir that reads a repository takes --repository; the allow-list is exact', () => {
  const commands = manifestCommands();
  const missing: string[] = [];
  for (const [id, command] of Object.entries(commands)) {
    const flags = Object.keys(command.flags);
    if (!flags.includes('data-dir') || id in READS_NO_REPOSITORY) continue;
    if (!flags.includes('repository')) missing.push(id);
  }
  assert.deepEqual(missing, [], 'commands that read a repository without --repository');
  for (const id of Object.keys(READS_NO_REPOSITORY)) {
    assert.ok(commands[id] !== undefined, `${id} is allow-listed but is no command`);
    assert.ok(!('repository' in commands[id].flags), `${id} takes --repository: remove it from the allow-list`);
  }
  // The ones this change added, named so that losing one fails here too.
  for (const id of [
    'agent-task:claim',
    'agent-task:collect',
    'check:add',
    'check:add-review',
    'check:list',
    'check:remove',
    'check:show',
    'status',
    'skill-workflow:list',
    'checkpoint',
  ]) {
    assert.ok('repository' in (commands[id]?.flags ?? {}), `${id} has --repository`);
  }
});

/** The scenario's store (repository `demo`, bound to s.ws) with a second repository `other`. */
async function twoRepositories(s: Scenario): Promise<string> {
  const ws2 = join(s.root, 'ws2');
  mkdirSync(ws2);
  writeFileSync(join(ws2, 'b.txt'), 'b\n');
  const init = await s.cli(['init-repo', ws2, '--name', 'other', '--json']);
  assert.equal(init.code, 0, init.stderr);
  return ws2;
}

function refusedWith(result: CliResult, code: string, exit: number): void {
  assert.equal(result.code, exit, result.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, code, result.stdout);
  assert.equal(result.stderr.split('\n').filter((l) => l !== '').length, 1, 'one error line');
}

test('two repositories: claim, check and collect follow --repository; a wrong one changes nothing', async (t) => {
  const s = await buildScenario(t, { profile: true });
  const inWs = (args: string[]): Promise<CliResult> => runCli(args, { cwd: s.ws });
  await twoRepositories(s);
  // check (inside the workspace, no --data-dir): its own repository works, by name, by ID or left
  // out, although the store now holds two.
  for (const name of [['--repository', 'demo'], ['--repository', s.repository], []]) {
    const listed = await inWs(['check', 'list', ...name, '--json']);
    assert.equal(listed.code, 0, listed.stderr);
  }
  const claimArgs = (out: string): string[] => [
    'agent-task',
    'claim',
    '--step',
    'check',
    '--change',
    SCENARIO_CHANGE,
    '--token-file',
    s.tokenFile,
    '--out',
    out,
    '--json',
  ];

  // claim: the grant's repository by name is accepted; the other is refused and nothing is written.
  const wrongOut = join(s.root, 'wrong.descriptor.json');
  refusedWith(await s.cli([...claimArgs(wrongOut), '--repository', 'other']), 'TASK_NOT_AUTHORIZED', 2);
  assert.equal(existsSync(wrongOut), false, 'no descriptor written');
  const unknown = await s.cli([...claimArgs(wrongOut), '--repository', 'nope']);
  refusedWith(unknown, 'REPOSITORY_NOT_FOUND', 2);
  const out = join(s.root, 'unit.descriptor.json');
  const claimed = await s.cli([...claimArgs(out), '--repository', 'demo']);
  assert.equal(claimed.code, 0, claimed.stderr);
  const descriptor = JSON.parse(readFileSync(out, 'utf8')) as { repository_id: string };
  assert.equal(descriptor.repository_id, s.repository, 'the claim is in demo');

  // collect: a --repository other than the descriptor's is refused before anything runs.
  const before = readdirSync(s.stateDir).sort();
  const collected = await s.cli([
    'agent-task',
    'collect',
    '--descriptor',
    out,
    '--key',
    s.keyFile,
    '--state-dir',
    s.stateDir,
    '--token-file',
    s.tokenFile,
    '--repository',
    'other',
    '--json',
  ]);
  refusedWith(collected, 'REPOSITORY_MISMATCH', 2);
  assert.match(collected.stderr, /collector descriptor is bound to repository demo/);
  assert.deepEqual(readdirSync(s.stateDir).sort(), before, 'nothing reserved in --state-dir');

  // check: another repository than the workspace's is refused, reading and changing nothing.
  const list = await inWs(['check', 'list', '--repository', 'other', '--json']);
  refusedWith(list, 'REPOSITORY_MISMATCH', 2);
  assert.match(list.stderr, /the workspace is bound to repository demo .*not other/);
  const added = await inWs([
    'check',
    'add',
    'unit',
    '--image',
    IMAGE,
    '--no-image-check',
    '--repository',
    'other',
    '--json',
    '--',
    'true',
  ]);
  refusedWith(added, 'REPOSITORY_MISMATCH', 2);
  assert.equal(existsSync(join(s.ws, '.agentscm-checks')), false, 'no check file written');
  refusedWith(await inWs(['status', '--repository', 'other', '--json']), 'REPOSITORY_MISMATCH', 2);
  refusedWith(
    await inWs(['checkpoint', '--change', 'c9', '--repository', 'other', '--json']),
    'REPOSITORY_MISMATCH',
    2,
  );
  const status = await inWs(['status', '--repository', 'demo', '--json']);
  assert.equal(jsonOf<{ repository: string }>(status).repository, s.repository, status.stderr);

  // skill-workflow list: only the runs of the named repository.
  const listed = await s.cli(['skill-workflow', 'list', '--repository', 'other', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(jsonOf<{ runs: unknown[] }>(listed).runs, []);
  refusedWith(await s.cli(['skill-workflow', 'list', '--repository', 'nope', '--json']), 'REPOSITORY_NOT_FOUND', 2);
});

test('skill-workflow run --change runs a command step with no runtime flags; no docker on PATH names --docker', async (t) => {
  const s = await buildScenario(t);
  // No docker anywhere on PATH: refused before anything is created, naming --docker.
  const emptyPath = tempDir(t, 'agentscm-no-docker-');
  const refused = await s.cli(['skill-workflow', 'run', '--change', SCENARIO_CHANGE, '--json'], {
    env: { PATH: emptyPath },
  });
  refusedWith(refused, 'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED', 4);
  assert.match(refused.stderr, /no executable docker is on PATH; pass --docker PATH/);
  assert.equal(existsSync(join(s.dataDir, 'skill-workflows')), false, 'no journal created');

  // The docker on PATH and the default socket: the command step runs on the real engine.
  const run = await s.cli(['skill-workflow', 'run', '--change', SCENARIO_CHANGE, '--json']);
  assert.equal(run.code, 0, run.stderr);
  const report = jsonOf<{ state: string; run_id: string }>(run);
  assert.equal(report.state, 'completed', run.stdout);
  const listed = jsonOf<{ runs: { run_id: string }[] }>(await s.cli(['skill-workflow', 'list', '--json']));
  assert.deepEqual(
    listed.runs.map((r) => r.run_id),
    [report.run_id],
  );
});
