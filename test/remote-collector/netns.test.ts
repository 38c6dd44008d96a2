/**
 * Collectors on other hosts, on this machine: the hub (`hub serve`, a real process) in one network
 * namespace, two collectors (`agent-task collect --endpoint`, real processes with no store) each in
 * its own namespace, joined to the hub only by veth pairs with addresses private to the
 * namespaces, made and removed by the test. The whole path, as an operator and an agent run it:
 * init-repo, check add, collector add (one per collector), grant, checkpoint of two Changes, a
 * claim each, both collected at once over the veth pairs (fetch by digest → run on the live engine
 * → upload), then qualification, approve, land, receipt export and an offline receipt verify,
 * exactly like a local collection. Skipped with a message only where namespaces cannot be made
 * (not root, no `ip`). Names and addresses carry the process id, so concurrent runs never collide.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { requireEngine } from '../support/collector.js';
import { DOCKER_EXE, DOCKER_SOCKET, IMAGE } from '../support/runtime.js';

const RUNTIME = ['--docker', DOCKER_EXE, '--docker-socket', DOCKER_SOCKET];

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

interface Hosts {
  readonly hub: string;
  readonly collectors: readonly [string, string];
  readonly hubAddress: string;
}

/**
 * A hub namespace and two collector namespaces, each collector joined to the hub by its own veth
 * pair (/30 each; the second routes the hub's first address through its pair); removed after the
 * test. The test fails where namespaces cannot be made: it never counts as passed without running.
 */
function namespaces(t: TestContext): Hosts {
  const tag = `${process.pid % 100000}`;
  const hub = `agr-h${tag}`;
  const collectors = [`agr-a${tag}`, `agr-b${tag}`] as const;
  const net = `10.${220 + (process.pid % 30)}.${process.pid % 250}`;
  try {
    ip('netns', 'add', hub);
  } catch (error) {
    assert.fail(
      `network namespaces cannot be made here (the test needs root and iproute2): ${
        (error as Error).message.split('\n')[0] ?? ''
      }`,
    );
  }
  t.after(() => {
    for (const ns of [hub, ...collectors])
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
  });
  ip('-n', hub, 'link', 'set', 'lo', 'up');
  collectors.forEach((ns, i) => {
    const [h, c] = [`agrh${i}${tag}`, `agrc${i}${tag}`];
    const base = i * 4;
    ip('netns', 'add', ns);
    ip('link', 'add', h, 'type', 'veth', 'peer', 'name', c);
    ip('link', 'set', h, 'netns', hub);
    ip('link', 'set', c, 'netns', ns);
    ip('-n', hub, 'addr', 'add', `${net}.${base + 1}/30`, 'dev', h);
    ip('-n', ns, 'addr', 'add', `${net}.${base + 2}/30`, 'dev', c);
    ip('-n', hub, 'link', 'set', h, 'up');
    ip('-n', ns, 'link', 'set', c, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    if (i > 0) ip('-n', ns, 'route', 'add', `${net}.1/32`, 'via', `${net}.${base + 1}`);
  });
  return { hub, collectors, hubAddress: `${net}.1` };
}

function inNamespace(ns: string, args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.AGENTSCM_DATA_DIR;
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, ...cliEntryArgv(), ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr, stdoutBytes: Buffer.from(stdout) }));
  });
}

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}${result.stdout}`);
  return result;
}

interface Qualification {
  readonly qualified: boolean;
  readonly tasks: { readonly step_id: string; readonly state: string }[];
}

test('two collectors on two hosts collect two Changes at once; the evidence qualifies and lands', async (t) => {
  assert.ok(
    typeof process.getuid !== 'function' || process.getuid() === 0,
    'network namespaces need root: run this test as root, as CI does',
  );
  await requireEngine();
  const hosts = namespaces(t);
  const root = tempDir(t, 'agentscm-netns-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  const tokenFile = join(root, 'tokens', 'agent.token');
  mkdirSync(join(ws, 'test'), { recursive: true });
  writeFileSync(join(ws, 'greeting.txt'), 'hello\n');
  writeFileSync(join(ws, 'test', 'greet.sh'), 'grep -q hello /src/greeting.txt\n');
  const cli = (args: readonly string[]): Promise<CliResult> => runCli(['--data-dir', dataDir, ...args], { cwd: ws });

  // The hub host: the store, the check, one collector setup per collector host, an agent grant.
  ok(await cli(['init-repo', ws, '--name', 'remote-demo']), 'init-repo');
  const checkAdd = ['check', 'add', 'greet', '--image', IMAGE, '--docker-socket', DOCKER_SOCKET, '--memory', '64m'];
  ok(await cli([...checkAdd, '--', 'sh', 'test/greet.sh']), 'check add');
  const stateDirs = [join(root, 'collector-a'), join(root, 'collector-b')] as const;
  const profiles: string[] = [];
  for (const [i, stateDir] of stateDirs.entries()) {
    const added = ok(
      await cli([
        'agent-task',
        'collector',
        'add',
        '--step',
        'greet',
        '--state-dir',
        stateDir,
        '--executor',
        `box-${i}`,
        ...RUNTIME,
        '--json',
      ]),
      `collector add ${i}`,
    );
    profiles.push(jsonOf<{ collector_profile_id: string }>(added).collector_profile_id);
  }
  assert.notEqual(profiles[0], profiles[1], 'each collector has its own profile');
  ok(await cli(['grant', 'create', '--actor', 'me/agent-1', '--token-file', tokenFile]), 'grant create');

  // Two Changes, each checkpointed from the workspace as it is then.
  appendFileSync(join(ws, 'greeting.txt'), 'hello again\n');
  ok(await cli(['checkpoint', '--change', 'fix-1', '--json']), 'checkpoint fix-1');
  appendFileSync(join(ws, 'greeting.txt'), 'hello once more\n');
  ok(await cli(['checkpoint', '--change', 'fix-2', '--json']), 'checkpoint fix-2');

  // The hub serves the store in its namespace, on its private address only.
  const repo = jsonOf<{ repository: string; requirement_digest: string }>(
    ok(await cli(['requirement', 'show', '--target', 'main', '--json']), 'requirement show'),
  );
  const config = join(root, 'hub.json');
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      listen: `${hosts.hubAddress}:0`,
      agent_task_profiles: [
        {
          repository_id: 'acme/remote-demo',
          profile_id: 'default',
          native_repository: repo.repository,
          data_dir: dataDir,
          target: 'main',
          requirement_digest: repo.requirement_digest,
          publish_forge_status: false,
        },
      ],
    }),
  );
  const hub = spawn(
    'ip',
    ['netns', 'exec', hosts.hub, process.execPath, ...cliEntryArgv(), 'hub', 'serve', '--config', config, '--json'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.after(() => hub.kill('SIGKILL'));
  let hubErr = '';
  hub.stderr.on('data', (chunk: Buffer) => (hubErr += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    hub.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const end = out.indexOf('\n');
      if (end >= 0) resolve((JSON.parse(out.slice(0, end)) as { url: string }).url);
    });
    hub.on('exit', (code) => reject(new Error(`hub exited ${String(code)}: ${hubErr}`)));
  });
  assert.ok(url.startsWith(`http://${hosts.hubAddress}:`), url);
  const endpoint = `${url.replace(/\/$/, '')}/v1/hub/workspace/repositories/acme/remote-demo/profiles/default/agent-tasks`;

  // The agent claims each Change under its own collector's profile.
  const changes = ['fix-1', 'fix-2'] as const;
  const descriptors = changes.map((change) => join(root, `${change}.descriptor.json`));
  for (const [i, change] of changes.entries()) {
    const claimArgs = ['agent-task', 'claim', '--profile', profiles[i] ?? '', '--change', change];
    ok(await cli([...claimArgs, '--token-file', tokenFile, '--out', descriptors[i] ?? '']), `claim ${change}`);
  }

  // Both collector hosts collect at once; neither has a store (its --data-dir names nothing).
  const collected = await Promise.all(
    changes.map((change, i) => {
      const stateDir = stateDirs[i] ?? '';
      return inNamespace(hosts.collectors[i] ?? '', [
        '--data-dir',
        join(root, `no-store-${change}`),
        'agent-task',
        'collect',
        '--descriptor',
        descriptors[i] ?? '',
        '--key',
        join(stateDir, 'signing-key.json'),
        '--state-dir',
        stateDir,
        '--token-file',
        tokenFile,
        ...RUNTIME,
        '--endpoint',
        endpoint,
        '--json',
      ]);
    }),
  );
  for (const [i, result] of collected.entries()) {
    const answer = jsonOf<{ outcome: string; upload: { target: string; answer: { status: string } } }>(
      ok(result, `collect ${changes[i] ?? ''}`),
    );
    assert.equal(answer.outcome, 'passed');
    assert.equal(answer.upload.target, 'endpoint');
    assert.equal(answer.upload.answer.status, 'imported');
    assert.equal(existsSync(join(root, `no-store-${changes[i] ?? ''}`)), false, 'the collector made no store');
  }

  // The evidence uploaded from the other hosts qualifies both Changes, as a local collection would.
  for (const change of changes) {
    const q = jsonOf<Qualification>(await cli(['qualification', '--change', change, '--json']));
    assert.equal(q.qualified, true, `${change}: ${JSON.stringify(q)}`);
    assert.deepEqual(
      q.tasks.map((task) => [task.step_id, task.state]),
      [['greet', 'succeeded']],
    );
  }
  ok(await cli(['approve', '--change', 'fix-1']), 'approve');
  ok(await cli(['land', '--change', 'fix-1', '--target', 'main']), 'land');
  const receipt = join(root, 'fix-1.agscmrb');
  ok(await cli(['receipt', 'export', '--change', 'fix-1', '--out', receipt]), 'receipt export');
  const verified = jsonOf<{ verified: boolean }>(
    ok(
      await runCli(
        ['receipt', 'verify', receipt, '--public-key-file', join(stateDirs[0], 'signing-key.json'), '--json'],
        { cwd: root },
      ),
      'receipt verify',
    ),
  );
  assert.equal(verified.verified, true);
});
