/**
 * The full agent loop with the real Claude Code and Codex CLIs (docs/testing.md "The full loop"):
 * an operator sets up a copy of examples/node-project entirely through the CLI — init-repo, the
 * dependency image of its lockfile (`deps build`), the `tests` check on it (`--deps npm`), the
 * collector, a grant, a hub on loopback whose MCP endpoint is registered with the client (`claude mcp add`; Codex: `[mcp_servers.agentscm]` in
 * HOME/.codex/config.toml), the agent-owned Stop hook (`install-stop --client C --mode task-stop`)
 * and the instruction block — then plants one bug so one test fails. The scripted model
 * (test/support/fake-model/scripted-agent.ts) knows nothing about agentscm: it runs the
 * `$ agentscm …` lines of its newest input and fixes a failing test it sees in an output tail.
 * From the fresh Change it must reach a passing Stop in at most 6 stops, through one failing
 * collect, and `agentscm qualification --change C --json` must then say qualified.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { INSTRUCTION_BLOCK } from '../../src/workspace/instruction-block.js';
import { cliEntryArgv, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { CLAUDE_CODE, CODEX, installClient } from '../support/agent-clients.js';
import { startFakeAnthropic } from '../support/fake-model/anthropic-messages.js';
import { startFakeResponses } from '../support/fake-model/openai-responses.js';
import { agentscmShim, runClaude, runCodex, writeCodexConfig } from '../support/fake-model/run-client.js';
import { scriptedAgent } from '../support/fake-model/scripted-agent.js';
import type { Transcript } from '../support/fake-model/transcript.js';
import { buildDepsImage } from '../support/npm-deps.js';

const CHANGE = 'fix-1';
const HUB_REPOSITORY = 'me/node-project';
const HUB_PROFILE = 'default';
/**
 * The planted bug and the model's only domain knowledge: the fix for the test it breaks. The bug
 * breaks `prints zero as 0s` in the suite `formatDuration`; node's TAP output prints the suite's
 * own `not ok` line after its subtests, and the output tail (its last 40 lines) reaches back to
 * that line, not to the subtest's, so the title the model can read is the suite's.
 */
const FAILING_TITLE = 'formatDuration';
const BUG = { from: "if (ms === 0) return '0s';", to: "if (ms === 0) return '0ms';" };
const FIX = `sed -i "s/return '0ms'/return '0s'/" src/duration.js`;
const MAX_STOPS = 6;

type Client = 'claude-code' | 'codex';

interface World {
  readonly dataDir: string;
  readonly workspace: string;
  readonly home: string;
  readonly shim: string;
  readonly tokenFile: string;
}

/** One CLI command as the operator types it in the project (exit 0 required). */
async function op(world: Pick<World, 'dataDir' | 'workspace'>, args: readonly string[]): Promise<CliResult> {
  const result = await runCli(['--data-dir', world.dataDir, ...args], { cwd: world.workspace, timeoutMs: 300_000 });
  assert.equal(result.code, 0, `agentscm ${args.join(' ')}: ${result.stderr}`);
  return result;
}

/** `agentscm hub serve --config FILE` as a child process; its first stdout line is the URL. */
async function serveHub(t: TestContext, config: string): Promise<string> {
  const child = spawn(process.execPath, [...cliEntryArgv(), 'hub', 'serve', '--config', config], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGTERM'));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const end = stdout.indexOf('\n');
      if (end >= 0) resolve(stdout.slice(0, end).replace(/\/$/, ''));
    });
    child.on('exit', (code) => reject(new Error(`hub exited ${String(code)} before listening: ${stderr}`)));
  });
}

/** How the operator registers the hub's MCP endpoint (URL and bearer token) with the agent's client. */
type RegisterMcp = (world: World, url: string, token: string) => void;

/** Claude Code: `claude mcp add --transport http agentscm URL --header "Authorization: Bearer TOKEN"`. */
function claudeMcp(claude: string): RegisterMcp {
  return (world, url, token) => {
    const mcp = spawnSync(
      claude,
      ['mcp', 'add', '--transport', 'http', 'agentscm', url, '--header', `Authorization: Bearer ${token}`],
      { cwd: world.workspace, env: { PATH: process.env.PATH, HOME: world.home }, encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(mcp.status, 0, `claude mcp add: ${mcp.stdout}${mcp.stderr}`);
  };
}

/**
 * Codex: its config (the fake model provider, hooks on, the workspace trusted) and a Streamable
 * HTTP server table `[mcp_servers.agentscm]` with `url` and a static `http_headers` Authorization.
 */
function codexMcp(modelOrigin: string): RegisterMcp {
  return (world, url, token) => {
    writeCodexConfig(world.home, modelOrigin, world.workspace);
    const table = [
      '[mcp_servers.agentscm]',
      `url = ${JSON.stringify(url)}`,
      `http_headers = { Authorization = ${JSON.stringify(`Bearer ${token}`)} }`,
      '',
    ].join('\n');
    appendFileSync(join(world.home, '.codex', 'config.toml'), table);
  };
}

async function operatorSetup(t: TestContext, client: Client, registerMcp: RegisterMcp): Promise<World> {
  const dir = tempDir(t, 'agentscm-loop-');
  const world: World = {
    dataDir: join(dir, 'data'),
    workspace: join(dir, 'node-project'),
    home: join(dir, 'home'),
    shim: agentscmShim(join(dir, 'bin')),
    tokenFile: join(dir, 'agent-1.token'),
  };
  mkdirSync(world.home);
  const image = spawnSync('bash', [join(REPO_ROOT, 'bin/build-node-image.sh')], { encoding: 'utf8' });
  assert.equal(image.status, 0, image.stderr);
  cpSync(join(REPO_ROOT, 'examples/node-project'), world.workspace, { recursive: true });
  await op(world, ['init-repo', '--name', 'node-project']);
  // The example's tests import a dev dependency: its image, reused across runs (support/npm-deps.ts).
  await buildDepsImage(world.dataDir, world.workspace, 'local/node:20');
  await op(world, [
    'check',
    'add',
    'tests',
    '--image',
    'local/node:20',
    '--deps',
    'npm',
    '--memory',
    '512m',
    '--',
    'node',
    '--test',
  ]);
  await op(world, ['agent-task', 'collector', 'add', '--step', 'tests', '--state-dir', join(dir, 'collector')]);
  await op(world, ['grant', 'create', '--actor', 'me/agent-1', '--token-file', world.tokenFile]);

  // The hub's execution config: one profile pinning main's installed requirement.
  const status = JSON.parse((await op(world, ['status', '--json'])).stdout) as { repository: string };
  const requirement = JSON.parse((await op(world, ['requirement', 'show', '--target', 'main', '--json'])).stdout) as {
    requirement_digest: string;
  };
  const config = join(dir, 'hub.json');
  const profile = {
    repository_id: HUB_REPOSITORY,
    profile_id: HUB_PROFILE,
    native_repository: status.repository,
    data_dir: world.dataDir,
    target: 'main',
    requirement_digest: requirement.requirement_digest,
  };
  writeFileSync(config, JSON.stringify({ version: 1, listen: '127.0.0.1:0', agent_task_profiles: [profile] }));
  const hubUrl = await serveHub(t, config);

  // The agent's client: the hub's MCP endpoint, the agent-owned Stop hook, the instruction block.
  const token = readFileSync(world.tokenFile, 'utf8').trim();
  registerMcp(world, `${hubUrl}/v1/hub/workspace/mcp?repository=${HUB_REPOSITORY}&profile=${HUB_PROFILE}`, token);
  await op(world, [
    'install-stop',
    '--client',
    client,
    '--mode',
    'task-stop',
    '--change',
    CHANGE,
    '--workspace',
    world.workspace,
    '--repo',
    world.workspace,
    '--endpoint',
    hubUrl,
    '--repository',
    HUB_REPOSITORY,
    '--profile',
    HUB_PROFILE,
    '--token-file',
    world.tokenFile,
  ]);
  await op(world, ['instructions', 'write']);

  // The bug: one test fails.
  const source = join(world.workspace, 'src/duration.js');
  const text = readFileSync(source, 'utf8');
  assert.ok(text.includes(BUG.from));
  writeFileSync(source, text.replace(BUG.from, BUG.to));
  return world;
}

/**
 * The Stop hook's block feedbacks among the model's inputs, one per block: Claude Code sends
 * `Stop hook feedback:` user text with the REASON (and a second input, `Stop hook blocking error
 * from command: …`, which is not counted), Codex a user message `<hook_prompt hook_run_id=…>REASON`;
 * every REASON begins with `agentscm Stop hook:`.
 */
const FEEDBACK = /^(?:Stop hook feedback:\s*|<hook_prompt[^>]*>)agentscm Stop hook:/;

function stopFeedbacks(turns: readonly Transcript[]): string[] {
  const last = turns.at(-1);
  if (last === undefined) return [];
  return last.items.flatMap((item) => (item.kind === 'input' && FEEDBACK.test(item.text) ? [item.text] : []));
}

function describeRun(turns: readonly Transcript[]): string {
  const last = turns.at(-1);
  if (last === undefined) return '(no model request)';
  return last.items
    .map((item) => {
      if (item.kind === 'call') return `CALL ${item.command}`;
      const text = 'text' in item ? item.text : '';
      return `${item.kind.toUpperCase()} ${text.length > 1500 ? `${text.slice(0, 1500)}…` : text}`;
    })
    .join('\n');
}

/** The prompt both clients get: the instruction block, then the task. */
const PROMPT = `${INSTRUCTION_BLOCK}\nMake the tests pass.\n`;
/** What the scripted model knows: the fix for the planted bug's failing test. */
const MODEL = scriptedAgent({ fixes: { [FAILING_TITLE]: FIX } });

/**
 * The loop's outcome, the same for both clients: the run ended with no block pending within
 * MAX_STOPS stops, the fix came after a model request holding the failing collect's output tail,
 * two collects in all, and the Change is qualified.
 */
async function assertLoop(t: TestContext, world: World, turns: readonly Transcript[]): Promise<void> {
  const story = describeRun(turns);
  // A passing Stop: the run ended with no block pending, within MAX_STOPS stops (each block is one feedback).
  const blocks = stopFeedbacks(turns);
  assert.ok(blocks.length + 1 <= MAX_STOPS, `${blocks.length} blocked stops before the pass:\n${story}`);
  t.diagnostic(`${blocks.length} blocked stops, then a passing one`);
  const items = turns.at(-1)!.items;
  const calls = items.flatMap((item) => (item.kind === 'call' ? [item.command] : []));
  assert.ok(calls.includes(FIX), `the model never applied the fix:\n${story}`);
  // One collect failed, and its output tail (the TAP `not ok` line) was in a model request before the fix.
  const fixCall = items.findIndex((item) => item.kind === 'call' && item.command === FIX);
  const before = items.slice(0, fixCall).filter((item) => item.kind === 'input' || item.kind === 'result');
  assert.ok(
    before.some((item) => 'text' in item && item.text.includes(`not ok`) && item.text.includes(FAILING_TITLE)),
    `no output tail before the fix:\n${story}`,
  );
  const collects = calls.filter((command) => / agent-task collect /.test(command));
  assert.equal(collects.length, 2, `collects: ${collects.join('\n')}`);

  const qualification = await runCli(['--data-dir', world.dataDir, 'qualification', '--change', CHANGE, '--json'], {
    cwd: world.workspace,
  });
  assert.equal(qualification.code, 0, qualification.stderr);
  assert.equal((JSON.parse(qualification.stdout) as { qualified: boolean }).qualified, true);
}

test('Claude Code takes a fresh failing Change to a passing Stop', { timeout: 1_800_000 }, async (t) => {
  const claude = await installClient(CLAUDE_CODE);
  const world = await operatorSetup(t, 'claude-code', claudeMcp(claude));
  const server = await startFakeAnthropic(MODEL);
  t.after(() => server.close());
  const run = await runClaude(claude, server.origin, PROMPT, {
    cwd: world.workspace,
    home: world.home,
    path: [world.shim],
    timeoutMs: 1_500_000,
  });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}\n${describeRun(server.turns)}`);
  await assertLoop(t, world, server.turns);
});

test('Codex takes a fresh failing Change to a passing Stop', { timeout: 1_800_000 }, async (t) => {
  const codex = await installClient(CODEX);
  const server = await startFakeResponses(MODEL);
  t.after(() => server.close());
  const world = await operatorSetup(t, 'codex', codexMcp(server.origin));
  const run = await runCodex(codex, PROMPT, {
    cwd: world.workspace,
    home: world.home,
    path: [world.shim],
    timeoutMs: 1_500_000,
  });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}\n${describeRun(server.turns)}`);
  assert.deepEqual(server.unknown, []);
  // The hub's MCP endpoint was registered and reached: Codex offered its tools (namespace `mcp__agentscm`).
  // (Claude Code defers MCP tools behind its ToolSearch tool, so its first request does not list them.)
  const tools = server.turns[0]?.tools ?? [];
  assert.ok(tools.includes('mcp__agentscm'), `no agentscm MCP tools offered: ${tools.join(', ')}`);
  await assertLoop(t, world, server.turns);
});
