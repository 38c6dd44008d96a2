/**
 * The real Claude Code and Codex CLIs (pinned, installed outside the repository by
 * test/support/agent-clients.ts) talk to a fake model server on loopback, run the one shell
 * command the scripted model asks for, and fire the Stop hook `agentscm install-stop` installed:
 * its feedback is in the model's next request. The workspace has no requirement installed, so
 * the server-executed hook blocks (`requirement_not_found`) until its continuation counter ends
 * it. Run with `npm run test:clients` (docs/testing.md "Client tests").
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { CLAUDE_CODE, CODEX, installClient } from '../support/agent-clients.js';
import { startFakeAnthropic } from '../support/fake-model/anthropic-messages.js';
import { startFakeResponses } from '../support/fake-model/openai-responses.js';
import { agentscmShim, runClaude, runCodex, writeCodexConfig } from '../support/fake-model/run-client.js';
import { scriptedAgent } from '../support/fake-model/scripted-agent.js';
import type { Transcript } from '../support/fake-model/transcript.js';

const PROMPT = 'Run the command below, then finish.\n$ agentscm --version\n';
const FEEDBACK = '"code":"requirement_not_found"';

interface World {
  readonly workspace: string;
  readonly home: string;
  readonly shim: string;
}

async function makeWorld(t: TestContext, client: 'claude-code' | 'codex'): Promise<World> {
  const dir = tempDir(t, 'agentscm-clients-');
  const workspace = join(dir, 'ws');
  const home = join(dir, 'home');
  const dataDir = join(dir, 'data');
  mkdirSync(workspace);
  mkdirSync(home);
  writeFileSync(join(workspace, 'README.md'), 'A project.\n');
  const shim = agentscmShim(join(dir, 'bin'));
  const init = await runCli(['--data-dir', dataDir, 'init-repo', workspace, '--name', 'demo']);
  assert.equal(init.code, 0, init.stderr);
  const install = await runCli([
    '--data-dir',
    dataDir,
    'install-stop',
    '--client',
    client,
    '--mode',
    'stop',
    '--change',
    'c1',
    '--workspace',
    workspace,
    '--repo',
    workspace,
  ]);
  assert.equal(install.code, 0, install.stderr);
  return { workspace, home, shim };
}

/** The shared assertions: the command ran, and the Stop feedback reached the next request. */
function assertLoop(turns: readonly Transcript[], label: string): void {
  const ran = turns.flatMap((turn) => turn.items).find((item) => item.kind === 'call');
  assert.ok(ran !== undefined && ran.kind === 'call', `${label}: the model made no tool call`);
  assert.equal(ran.command, 'agentscm --version');
  const afterCall = turns.findIndex((turn) => turn.items.some((item) => item.kind === 'result'));
  assert.ok(afterCall >= 0, `${label}: no tool result came back`);
  const result = turns[afterCall]!.items.find((item) => item.kind === 'result');
  assert.match(result && 'text' in result ? result.text : '', /agentscm\/\d+\.\d+\.\d+/);
  // The turn after the model's first final text carries the Stop hook's feedback as its newest input.
  const next = turns[afterCall + 1];
  assert.ok(next !== undefined, `${label}: the Stop hook's block never reached the model`);
  const last = next.items.at(-1)!;
  assert.equal(last.kind, 'input');
  assert.ok('text' in last && last.text.includes(FEEDBACK), `${label}: newest input lacks the feedback`);
  // agentscm ends continuation after 8 blocks in a row, so the run ends on its own.
  assert.ok(turns.length <= 2 + 9, `${label}: ${turns.length} turns`);
}

test('Claude Code runs the fake model command and gets the Stop feedback', { timeout: 900_000 }, async (t) => {
  const binary = await installClient(CLAUDE_CODE);
  const world = await makeWorld(t, 'claude-code');
  const server = await startFakeAnthropic(scriptedAgent());
  t.after(() => server.close());
  const run = await runClaude(binary, server.origin, PROMPT, {
    cwd: world.workspace,
    home: world.home,
    path: [world.shim],
  });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assert.equal((JSON.parse(run.stdout) as { result: string }).result, 'Done.');
  assertLoop(server.turns, 'claude-code');
  assert.ok(server.requests.every((request) => request.headers['x-api-key'] === 'sk-ant-test-not-a-key'));
});

test('Codex runs the fake model command and gets the Stop feedback', { timeout: 900_000 }, async (t) => {
  const binary = await installClient(CODEX);
  const world = await makeWorld(t, 'codex');
  const server = await startFakeResponses(scriptedAgent());
  t.after(() => server.close());
  writeCodexConfig(world.home, server.origin, world.workspace);
  const run = await runCodex(binary, PROMPT, { cwd: world.workspace, home: world.home, path: [world.shim] });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assertLoop(server.turns, 'codex');
  assert.deepEqual(server.unknown, []);
});
