/**
 * End to end, the agent-owned loop (docs/stop-hooks.md "Agent-owned mode" and "The managed
 * instruction block"): an operator sets up a store, a workspace with the managed instruction block,
 * a requirement whose one command step runs a busybox check on the live engine, an enrolled
 * collector key and profile, a grant and a hub on loopback. A scripted agent that knows only the
 * instruction block, the MCP tool descriptions (listed by a real MCP client) and the Stop hook's
 * feedback — plus the operator's handout (store, token file, collector profile, key and engine) —
 * takes a fresh Change from an edit to a passing Stop: it runs the real `task-stop` process, parses
 * the last JSON line of its reason and follows `next` (checkpoint → collector_claim →
 * `agentscm agent-task collect` on the real engine → qualification) until the hook passes.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { INSTRUCTION_BLOCK } from '../../src/workspace/instruction-block.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { DOCKER_EXE, DOCKER_SOCKET } from '../support/evidence-collect.js';
import { hubOver, REPOSITORY_ID, startTestHub, type HubStore } from '../support/hub.js';
import { NOTES_PATH, PROFILE } from '../support/tasks.js';

/** What the operator hands the agent: where things are, never what to do. */
interface Handout {
  readonly dataDir: string;
  readonly workspace: string;
  readonly change: string;
  readonly hubUrl: string;
  readonly tokenFile: string;
  readonly collectorProfile: string;
  readonly keyFile: string;
  readonly stateDir: string;
}

async function operatorSetup(t: test.TestContext): Promise<Handout & { readonly hub: HubStore }> {
  // The operator's world (test/helpers/scenario.ts): init-repo writes the managed instruction block
  // into AGENTS.md before the first revision; the requirement's one command step is bound to an
  // operator's Change of that revision (no edit), the collector key is enrolled for it and its
  // profile installed, and the grant's actor is the agent.
  const s = await buildScenario(t, {
    argv: ['sh', '-c', 'grep -q fixed /src/a.txt'],
    files: { [NOTES_PATH]: 'notes', 'a.txt': 'broken\n' },
    edits: {},
    resources: [NOTES_PATH],
    profile: true,
  });
  assert.ok(s.profileId !== null);
  const hub = hubOver(s.root, {
    dataDir: s.dataDir,
    repository: s.repository,
    revision: s.revision,
    contextDigest: s.contextDigest,
    changeVersion: BigInt(s.changeVersion),
  });
  const running = await startTestHub(t, hub);
  return {
    dataDir: s.dataDir,
    workspace: s.ws,
    change: 'fix-1',
    hubUrl: running.url,
    tokenFile: s.tokenFile,
    collectorProfile: s.profileId,
    keyFile: s.keyFile,
    stateDir: s.stateDir,
    hub,
  };
}

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what}: ${result.stderr}`);
  return result;
}

/** The agent looks for the recipe file of the skill package in its own tree (next_action names RECIPE_PATH). */
function findRecipe(workspace: string): string {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const name of readdirSync(at)) {
      if (name === '.agentscm') continue;
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name === 'runner.json') found.push(relative(workspace, path));
    }
  };
  walk(workspace);
  assert.equal(found.length, 1);
  return found[0] as string;
}

interface Feedback {
  failures: { task_id: string; code: string }[];
  next_action: string;
  next: { operation: string; task_id?: string };
}

test(
  "a scripted agent takes a fresh Change from an edit to a passing Stop by following the hook's next",
  { timeout: 300_000 },
  async (t) => {
    const handout = await operatorSetup(t);

    // What the agent reads: the instruction block in AGENTS.md, and the MCP tools with their descriptions.
    const agents = readFileSync(join(handout.workspace, 'AGENTS.md'), 'utf8');
    assert.ok(agents.includes(INSTRUCTION_BLOCK), 'AGENTS.md holds the managed block');
    assert.match(agents, /next_action/);
    const client = new Client({ name: 'scripted-agent', version: '1' });
    const mcpPath = `/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=${PROFILE}`;
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcpPath, handout.hubUrl), {
        requestInit: { headers: { authorization: `Bearer ${readFileSync(handout.tokenFile, 'utf8').trim()}` } },
      }),
    );
    t.after(() => client.close());
    const tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.description ?? '']));
    assert.match(tools.get('agentscm_task_collector_claim') ?? '', /agentscm agent-task collect/);
    assert.match(tools.get('agentscm_task_qualification') ?? '', /after every collection/);

    // The edit that fixes what the check looks for.
    writeFileSync(join(handout.workspace, 'a.txt'), 'fixed\n');

    const base = ['--data-dir', handout.dataDir];
    const stopArgs = [
      ...base,
      'skill-workflow',
      'task-stop',
      handout.change,
      '--endpoint',
      handout.hubUrl,
      '--repository',
      REPOSITORY_ID,
      '--profile',
      PROFILE,
      '--token-file',
      handout.tokenFile,
      '--workspace',
      handout.workspace,
    ];
    const followed: string[] = [];
    let context: string | null = null;
    let passed = false;
    for (let turn = 0; turn < 8 && !passed; turn += 1) {
      const payload = JSON.stringify({
        session_id: 'e2e',
        hook_event_name: 'Stop',
        stop_hook_active: turn > 0,
        transcript_path: null,
        cwd: handout.workspace,
      });
      const stop = ok(await runCli(stopArgs, { input: payload }), 'task-stop');
      if (stop.stdout === '') {
        passed = true;
        break;
      }
      const reason = (JSON.parse(stop.stdout) as { decision: string; reason: string }).reason;
      const feedback = JSON.parse(reason.split('\n').at(-1) ?? '') as Feedback;
      followed.push(feedback.next.operation);
      switch (feedback.next.operation) {
        case 'checkpoint': {
          ok(
            await runCli([...base, 'checkpoint', '--change', handout.change, '--workspace', handout.workspace]),
            'checkpoint',
          );
          const created = ok(
            await runCli([
              ...base,
              'context',
              'create',
              '--change',
              handout.change,
              '--runner',
              findRecipe(handout.workspace),
              '--json',
            ]),
            'context create',
          );
          context = (JSON.parse(created.stdout) as { context_digest: string }).context_digest;
          break;
        }
        case 'collector_claim': {
          assert.ok(context !== null && feedback.next.task_id !== undefined, reason);
          const descriptor = join(handout.stateDir, '..', `descriptor-${turn}.json`);
          ok(
            await runCli([
              ...base,
              'agent-task',
              'claim',
              '--profile',
              handout.collectorProfile,
              '--change',
              handout.change,
              '--context',
              context,
              '--task',
              feedback.next.task_id,
              '--token-file',
              handout.tokenFile,
              '--out',
              descriptor,
            ]),
            'agent-task claim',
          );
          const endpoint = `${handout.hubUrl}/v1/hub/workspace/repositories/${REPOSITORY_ID}/profiles/${PROFILE}/agent-tasks`;
          const collected = ok(
            await runCli([
              ...base,
              'agent-task',
              'collect',
              '--descriptor',
              descriptor,
              '--key',
              handout.keyFile,
              '--state-dir',
              handout.stateDir,
              '--docker',
              DOCKER_EXE,
              '--docker-socket',
              DOCKER_SOCKET,
              '--token-file',
              handout.tokenFile,
              '--endpoint',
              endpoint,
              '--json',
            ]),
            'agent-task collect',
          );
          assert.equal((JSON.parse(collected.stdout) as { outcome: string }).outcome, 'passed', collected.stdout);
          // The instruction block: qualification tells whether the checkpointed revision qualifies.
          const answer = await client.callTool({
            name: 'agentscm_task_qualification',
            arguments: { subject: { change_id: handout.change, context_digest: context } },
          });
          assert.equal(
            (answer.structuredContent as { qualified: boolean }).qualified,
            true,
            JSON.stringify(answer.structuredContent),
          );
          break;
        }
        default:
          assert.fail(`the scripted agent cannot follow next ${JSON.stringify(feedback.next)}: ${reason}`);
      }
    }
    assert.ok(passed, `the Stop hook passed (followed ${followed.join(' → ')})`);
    assert.deepEqual(followed, ['checkpoint', 'collector_claim']);
  },
);
