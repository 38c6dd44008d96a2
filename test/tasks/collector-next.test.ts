/**
 * The agent's one path (docs/agent-tasks.md "One path for the agent"), through the real CLI, store,
 * Docker Engine and image: for a step with an installed collector profile `next` says
 * collector_claim and names the profile, a plain claim is refused (TASK_COLLECTOR_CLAIM_REQUIRED)
 * without a lease, and the command lines `qualification --token-file` prints, run exactly as
 * printed, claim and collect evidence after which the Change qualifies.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { journalPaths } from '../../src/native/journal-db.js';
import { addCollector } from '../collector-setup/support.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { buildScenario, SCENARIO_CHANGE } from '../helpers/scenario.js';

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

/** The words of one printed line: bare words and single-quoted ones (the only quoting the printer uses). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /'((?:[^']|'\\'')*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1]?.replaceAll(`'\\''`, "'") ?? match[2] ?? '');
  return words;
}

/** Every `$ agentscm …` line of an output, as the scripted agent extracts them. */
function printedCommands(stdout: string): string[] {
  return [...stdout.matchAll(/^\$ (agentscm .*)$/gm)].map((m) => m[1] ?? '');
}

function attemptRows(dataDir: string): number {
  const file = journalPaths(dataDir).db;
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM agent_task_attempts').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

interface NextAnswer {
  next: { operation: string; task_id?: string; task_digest?: string; collector_profile_id?: string };
}

test('a profiled step: next says collector_claim, a plain claim is refused, the printed lines qualify', async (t) => {
  const s = await buildScenario(t, { enrollStep: null });
  const { stateDir, profileId } = await addCollector(s);

  // next, with the Change id alone: collector_claim naming the profile.
  const next = jsonOf<NextAnswer>(
    ok(
      await s.cli(['agent-task', 'call', 'next', '--token-file', s.tokenFile, '--change', SCENARIO_CHANGE, '--json']),
      'call next',
    ),
  );
  assert.equal(next.next.operation, 'collector_claim');
  assert.equal(next.next.collector_profile_id, profileId);
  const taskId = next.next.task_id ?? '';
  assert.match(taskId, /^t-/);

  // A plain claim of that task: refused at once, no lease, no attempt row.
  const body = join(s.root, 'claim.json');
  writeFileSync(
    body,
    JSON.stringify({
      version: 1,
      request_id: 'plain-1',
      task_id: taskId,
      task_digest: next.next.task_digest,
      execution_operation_id: 'op-1',
      executor: null,
      requested_lease_ms: 3_600_000,
    }),
  );
  const plain = await s.cli([
    'agent-task',
    'call',
    'claim',
    '--token-file',
    s.tokenFile,
    '--change',
    SCENARIO_CHANGE,
    '--input',
    body,
    '--json',
  ]);
  assert.equal(plain.code, 2, plain.stderr);
  assert.match(plain.stderr + plain.stdout, /TASK_COLLECTOR_CLAIM_REQUIRED/);
  assert.ok((plain.stderr + plain.stdout).includes(profileId));
  assert.equal(attemptRows(s.dataDir), 0);

  // qualification without a token file names the profile and prints no command line.
  const bare = await s.cli(['qualification', '--change', SCENARIO_CHANGE]);
  assert.equal(bare.code, 1, bare.stderr);
  assert.match(bare.stdout, new RegExp(`next collector_claim ${taskId} under collector profile ${profileId}`));
  assert.deepEqual(printedCommands(bare.stdout), []);

  // With the agent's token file: two lines, every argument filled in, run exactly as printed.
  const human = await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--token-file', s.tokenFile]);
  assert.equal(human.code, 1, human.stderr);
  const lines = printedCommands(human.stdout);
  assert.equal(lines.length, 2, human.stdout);
  assert.doesNotMatch(lines.join('\n'), /<[A-Z_]+>|CHANGE|TOKEN_FILE|DESCRIPTOR/);
  assert.match(lines[0] ?? '', / agent-task claim --profile [0-9a-f]{64} --change c1 --context [0-9a-f]{64} --task /);
  assert.ok((lines[1] ?? '').includes(`--state-dir '${stateDir}'`), lines[1]);
  const json = jsonOf<{ next: { commands: string[][] } }>(
    await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--token-file', s.tokenFile, '--json']),
  );
  assert.deepEqual(
    json.next.commands.map((argv) => argv.slice(0, 4)),
    [
      ['agentscm', '--data-dir', s.dataDir, 'agent-task'],
      ['agentscm', '--data-dir', s.dataDir, 'agent-task'],
    ],
  );
  for (const line of lines) ok(await runCli(shellWords(line).slice(1)), `the printed line ${line}`);

  const after = jsonOf<{ qualified: boolean; next: { operation: string } }>(
    ok(await s.cli(['qualification', '--change', SCENARIO_CHANGE, '--json']), 'qualification after collect'),
  );
  assert.equal(after.qualified, true);
  assert.equal(after.next.operation, 'none');
});

test('without a collector profile next stays the plain claim', async (t) => {
  const s = await buildScenario(t);
  const next = jsonOf<NextAnswer>(
    ok(
      await s.cli(['agent-task', 'call', 'next', '--token-file', s.tokenFile, '--change', SCENARIO_CHANGE, '--json']),
      'call next',
    ),
  );
  assert.equal(next.next.operation, 'claim');
  assert.equal(next.next.collector_profile_id, undefined);
});
