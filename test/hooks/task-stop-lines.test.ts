/**
 * The Stop feedback's command lines, run as a user would (docs/stop-hooks.md "Block causes and
 * feedback"): a real store and workspace, a collector set up with `agent-task collector add`, a
 * real hub on loopback and the real Docker Engine with `local/busybox:1`. The task-stop hook
 * (spawned, Claude Code and Codex) blocks with collector_claim naming the profile, in its lines
 * and its JSON line; its `$ agentscm …` lines, run literally, claim and collect the evidence; the
 * Change then qualifies and the hook passes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { Ajv } from 'ajv';

import type { HubProfile } from '../../src/hub/config.js';
import { startHub } from '../../src/hub/server.js';
import { addCollector, RUNTIME } from '../collector-setup/support.js';
import { jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE } from '../helpers/scenario.js';
import { claudePayload, codexPayload } from '../support/task-stop.js';

const EXTERNAL = join(REPO_ROOT, 'docs', 'schemas', 'external', 'codex-hooks');
const validCodexOutput = new Ajv({ strict: false, allowUnionTypes: true }).compile(
  JSON.parse(readFileSync(join(EXTERNAL, 'stop.command.output.schema.json'), 'utf8')) as object,
);

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

/** The words of one printed line: bare words and single-quoted ones (the only quoting the printer uses). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g))
    words.push(match[1]?.replaceAll(`'\\''`, "'") ?? match[2] ?? '');
  return words;
}

interface Block {
  readonly reason: string;
  readonly json: { next: { operation: string; task_id?: string; collector_profile_id?: string } };
}

function blockOf(stdout: string): Block {
  const answer = JSON.parse(stdout) as { decision: string; reason: string };
  assert.equal(answer.decision, 'block', stdout);
  return { reason: answer.reason, json: JSON.parse(answer.reason.split('\n').at(-1) ?? '') as Block['json'] };
}

test('the Stop feedback lines, run literally, collect the evidence; the Change qualifies and the hook passes', async (t) => {
  const s = await buildScenario(t, { enrollStep: null });
  const { stateDir, profileId } = await addCollector(s);
  const profile: HubProfile = {
    repositoryId: 'acme/demo',
    profileId: 'default',
    nativeRepository: s.repository,
    dataDir: s.dataDir,
    target: 'main',
    requirementDigest: s.requirementDigest,
  };
  const hub = await startHub({ host: '127.0.0.1', port: 0, profiles: [profile] });
  t.after(() => hub.close());
  const hook = (command: string, payload: Buffer): Promise<CliResult> =>
    s.cli(
      [
        'skill-workflow',
        command,
        SCENARIO_CHANGE,
        '--endpoint',
        hub.url,
        '--repository',
        'acme/demo',
        '--profile',
        'default',
        '--token-file',
        s.tokenFile,
        '--workspace',
        s.ws,
      ],
      { input: payload },
    );

  const blocked = ok(await hook('task-stop', claudePayload('s-lines')), 'task-stop');
  const block = blockOf(blocked.stdout);
  assert.equal(block.json.next.operation, 'collector_claim');
  assert.equal(block.json.next.collector_profile_id, profileId, 'the JSON line names the profile');
  assert.match(block.reason, new RegExp(`under collector profile ${profileId}`));
  const lines = [...block.reason.matchAll(/^\$ (agentscm .*)$/gm)].map((m) => m[1] ?? '');
  assert.equal(lines.length, 2, block.reason);
  assert.match(lines[0] ?? '', / agent-task claim --profile [0-9a-f]{64} --change c1 --context [0-9a-f]{64} --task t-/);
  assert.ok((lines[1] ?? '').includes(`--state-dir '${stateDir}'`), lines[1]);
  assert.doesNotMatch(lines.join('\n'), /<[A-Z_]+>|CHANGE|TOKEN_FILE|DESCRIPTOR|context create/);

  // Codex: the same lines inside a reason that conforms to Codex's own output schema.
  const codex = ok(await hook('task-codex-stop', codexPayload('s-lines-codex')), 'task-codex-stop');
  const codexAnswer = JSON.parse(codex.stdout) as unknown;
  assert.ok(validCodexOutput(codexAnswer), JSON.stringify(validCodexOutput.errors));
  const codexBlock = blockOf(codex.stdout);
  assert.equal(codexBlock.json.next.collector_profile_id, profileId);

  // Run the lines exactly as printed (the leading `agentscm` is the CLI itself).
  for (const line of lines) ok(await runCli(shellWords(line).slice(1)), `the printed line ${line}`);

  const after = jsonOf<{ qualified: boolean }>(
    ok(await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']), 'qualification after collect'),
  );
  assert.equal(after.qualified, true);
  const passed = ok(await hook('task-stop', claudePayload('s-lines-2')), 'task-stop after collect');
  assert.equal(passed.stdout, '', 'the hook passes: nothing on stdout');

  // agent-task call next prints the same builder's lines once the task is done: none are left.
  const nextAfter = ok(
    await s.cli(['agent-task', 'call', 'next', '--token-file', s.tokenFile, '--change', SCENARIO_CHANGE]),
    'call next',
  );
  assert.doesNotMatch(nextAfter.stdout, /^\$ agentscm/m);
});

test('agent-task call next prints the claim and collect lines of a collector_claim (not in --json)', async (t) => {
  const s = await buildScenario(t, { enrollStep: null });
  const stateDir = join(s.root, 'state');
  ok(
    await s.cli(['agent-task', 'collector', 'add', '--step', 'check', '--state-dir', stateDir, ...RUNTIME, '--json']),
    'collector add',
  );
  const base = ['agent-task', 'call', 'next', '--token-file', s.tokenFile, '--change', SCENARIO_CHANGE];
  const human = ok(await s.cli(base), 'call next');
  const lines = [...human.stdout.matchAll(/^\$ (agentscm .*)$/gm)].map((m) => m[1] ?? '');
  assert.equal(lines.length, 2, human.stdout);
  // Not qualified yet: exit 1, the answer on stdout.
  const qualification = await s.cli([
    'qualification',
    '--change',
    SCENARIO_CHANGE,
    '--token-file',
    s.tokenFile,
    '--json',
  ]);
  assert.equal(qualification.code, 1, qualification.stderr);
  const commands = jsonOf<{ next: { commands: string[][] } }>(qualification).next.commands;
  assert.deepEqual(lines.map(shellWords), commands, 'the same lines as qualification --token-file');
  const json = ok(await s.cli([...base, '--json']), 'call next --json');
  assert.doesNotMatch(json.stdout, /^\$ /m);
  assert.equal(jsonOf<{ next: { operation: string } }>(json).next.operation, 'collector_claim');
});
