/**
 * `agent-task collector add --remote` (docs/collect.md "A collector on another host"): the lines it
 * prints are the whole setup. Step 1 prints the key command for the collector host and the second
 * step for this host, and changes nothing; the key command is run as printed in the collector's
 * state directory; step 2 (its public_key pasted in) enrolls it and prints the claim for this host
 * and the collect line for the collector host, which names the hub with --endpoint and a token
 * file. Each printed line is run as printed, placeholders replaced; the collection, made with no
 * store, is imported by the hub (real hub on loopback, live engine) and the Change qualifies.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { startHub } from '../../src/hub/server.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { requireEngine } from '../support/collector.js';
import { DOCKER_EXE, DOCKER_SOCKET, IMAGE } from '../support/runtime.js';

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}${result.stdout}`);
  return result;
}

/** A printed line's argv without its leading `agentscm`, placeholders replaced. */
function argvOf(line: readonly string[], values: Record<string, string>): string[] {
  assert.equal(line[0], 'agentscm');
  return line.slice(1).map((word) => values[word] ?? word);
}

interface KeyStep {
  stage: 'key';
  collector_host: { key: string[] };
  hub_host: { add: string[] };
}
interface Enrolled {
  stage: 'enrolled';
  collector_profile_id: string;
  installed: boolean;
  registration: { enrolled: boolean };
  hub_host: { claim: string[] };
  collector_host: { doctor: string[]; collect: string[] };
}

test('collector add --remote: the printed lines set up and run a collector on another host', async (t) => {
  await requireEngine();
  const root = tempDir(t, 'agentscm-add-remote-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  const tokenFile = join(root, 'tokens', 'agent.token');
  const remoteState = join(root, 'collector-host', 'state');
  mkdirSync(join(ws, 'test'), { recursive: true });
  writeFileSync(join(ws, 'greeting.txt'), 'hello\n');
  writeFileSync(join(ws, 'test', 'greet.sh'), 'grep -q hello /src/greeting.txt\n');
  const cli = (args: readonly string[]): Promise<CliResult> => runCli(['--data-dir', dataDir, ...args], { cwd: ws });
  ok(await cli(['init-repo', ws, '--name', 'remote-add']), 'init-repo');
  const checkAdd = ['check', 'add', 'greet', '--image', IMAGE, '--docker-socket', DOCKER_SOCKET, '--memory', '64m'];
  ok(await cli([...checkAdd, '--', 'sh', 'test/greet.sh']), 'check add');
  ok(await cli(['grant', 'create', '--actor', 'me/agent-1', '--token-file', tokenFile]), 'grant create');
  const requirement = jsonOf<{ repository: string; requirement_digest: string }>(
    ok(await cli(['requirement', 'show', '--target', 'main', '--json']), 'requirement show'),
  );
  const hub = await startHub(
    {
      host: '127.0.0.1',
      port: 0,
      profiles: [
        {
          repositoryId: 'acme/remote-add',
          profileId: 'default',
          nativeRepository: requirement.repository,
          dataDir,
          target: 'main',
          requirementDigest: requirement.requirement_digest,
        },
      ],
    },
    { accessLog: () => undefined },
  );
  t.after(() => hub.close());
  const endpoint = `${hub.url}/v1/hub/workspace/repositories/acme/remote-add/profiles/default/agent-tasks`;
  const addRemote = ['agent-task', 'collector', 'add', '--step', 'greet', '--state-dir', remoteState, '--remote'];

  // Step 1: nothing changes here; the key command is for the collector host.
  const first = await cli([
    ...addRemote,
    '--endpoint',
    endpoint,
    '--docker',
    DOCKER_EXE,
    '--docker-socket',
    DOCKER_SOCKET,
  ]);
  ok(first, 'collector add --remote (step 1)');
  assert.match(first.stdout, /On the collector host, create its key/);
  assert.match(first.stdout, /--public-key <PUBLIC_KEY>/);
  const step1 = jsonOf<KeyStep>(
    ok(await cli([...addRemote, '--endpoint', endpoint, ...['--docker', DOCKER_EXE], '--json']), 'step 1 --json'),
  );
  assert.equal(step1.stage, 'key');
  assert.equal(existsSync(remoteState), false, 'step 1 creates no key');
  const registrations = jsonOf<{ registrations: unknown[] }>(
    ok(await cli(['agent-task', 'registration', 'list', '--json']), 'list'),
  );
  assert.deepEqual(registrations.registrations, [], 'step 1 enrolls nothing');

  // On the collector host: the key command as printed (its own cwd, no store anywhere near).
  const collectorHost = join(root, 'collector-host', 'cwd');
  mkdirSync(collectorHost, { recursive: true });
  const key = ok(await runCli(argvOf(step1.collector_host.key, {}), { cwd: collectorHost }), 'key');
  const publicKey = /public_key: ([0-9a-f]{64})/.exec(key.stdout)?.[1];
  assert.ok(publicKey !== undefined, key.stdout);

  // Step 2 here, as printed, with the public key pasted in; a rerun reuses everything.
  const secondLine = argvOf(step1.hub_host.add, { '<PUBLIC_KEY>': publicKey });
  const second = jsonOf<Enrolled>(ok(await runCli([...secondLine, '--json'], { cwd: ws }), 'step 2'));
  assert.equal(second.stage, 'enrolled');
  assert.equal(second.installed, true);
  assert.equal(second.registration.enrolled, true);
  const again = ok(await runCli(secondLine, { cwd: ws }), 'step 2 again');
  assert.match(again.stdout, new RegExp(`already installed collector profile ${second.collector_profile_id}`));
  assert.match(again.stdout, /\(existing\)/);
  const collectLine = second.collector_host.collect;
  assert.deepEqual(collectLine.slice(collectLine.indexOf('--endpoint'), collectLine.indexOf('--endpoint') + 4), [
    '--endpoint',
    endpoint,
    '--token-file',
    '<TOKEN_FILE>',
  ]);
  assert.ok(!collectLine.includes('--data-dir'), 'the collector host has no store');

  // An agent claims here; the descriptor and token file are carried; the collector host collects.
  ok(await cli(['checkpoint', '--change', 'fix-1', '--json']), 'checkpoint');
  const descriptor = join(root, 'fix-1.descriptor.json');
  const values = { '<CHANGE>': 'fix-1', '<TOKEN_FILE>': tokenFile, '<DESCRIPTOR_FILE>': descriptor };
  ok(await runCli(argvOf(second.hub_host.claim, values), { cwd: ws }), 'claim');
  const collected = jsonOf<{ outcome: string; upload: { target: string; answer: { status: string } } }>(
    ok(await runCli([...argvOf(collectLine, values), '--json'], { cwd: collectorHost }), 'collect'),
  );
  assert.equal(collected.outcome, 'passed');
  assert.equal(collected.upload.target, 'endpoint');
  assert.equal(collected.upload.answer.status, 'imported');
  assert.deepEqual(readdirSync(collectorHost), [], 'no store was made on the collector host');
  const q = jsonOf<{ qualified: boolean }>(await cli(['qualification', '--change', 'fix-1', '--json']));
  assert.equal(q.qualified, true);
});
