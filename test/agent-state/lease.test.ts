/**
 * The mutation lease across real `agentscm agent-state run` processes: one writer per git root
 * whichever subdirectory it starts from, and a lease left by a SIGKILLed run reported as stale
 * and left in place.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { jsonOf, runCli, cliEntryArgv } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { alive, makeRepo } from './fixture.js';

async function waitFor(path: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface RunJson {
  state: { state: string; blocked_reason: string | null; result: { summary: string } | null };
  observation: { lease: { taken: boolean; path: string; stale: boolean; holder: { agent_id: string; pid: number } | null } | null };
}

test('two runs from different subdirectories of one repository: the second is blocked/conflict before it starts', async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  mkdirSync(join(repo, 'docs/deep'), { recursive: true });
  const env = { TMPDIR: leases };
  const first = runCli(['agent-state', 'run', '--agent', 'first', '--scope', 'src:write', '--json', '--', 'sh', '-c', 'touch started.flag; while [ ! -e release.flag ]; do sleep 0.05; done'], { cwd: join(repo, 'src'), env });
  await waitFor(join(repo, 'src/started.flag'));
  const second = await runCli(['agent-state', 'run', '--agent', 'second', '--scope', 'docs:write', '--json', '--', 'touch', 'second-ran.flag'], { cwd: join(repo, 'docs/deep'), env });
  assert.equal(second.code, 3, second.stderr);
  const blocked = jsonOf<RunJson>(second);
  assert.equal(blocked.state.state, 'blocked');
  assert.equal(blocked.state.blocked_reason, 'conflict');
  assert.equal(blocked.observation.lease?.holder?.agent_id, 'first');
  assert.equal(existsSync(join(repo, 'docs/deep/second-ran.flag')), false);
  // Release the first run; its lease goes with it and a new run proceeds.
  mkdirSync(join(repo, 'src/release.flag'));
  const done = await first;
  assert.equal(jsonOf<RunJson>(done).state.state, 'completed', done.stderr);
  const third = await runCli(['agent-state', 'run', '--agent', 'second', '--scope', 'docs:write', '--', 'touch', 'third.flag'], { cwd: join(repo, 'docs/deep'), env });
  assert.equal(third.code, 0, third.stderr + third.stdout);
});

test('a lease left by a SIGKILLed run is reported as stale and never removed', async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  const child = spawn(process.execPath, [...cliEntryArgv(), 'agent-state', 'run', '--agent', 'crashed', '--scope', 'src:write', '--', 'sh', '-c', 'echo $$ > src/worker.pid; exec sleep 30'], {
    cwd: repo,
    env: { ...process.env, TMPDIR: leases },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitFor(join(repo, 'src/worker.pid'));
  child.kill('SIGKILL');
  await exited;
  // The contained worker is in its own group and outlives the killed controller: end it here.
  const worker = Number(readFileSync(join(repo, 'src/worker.pid'), 'utf8'));
  t.after(() => {
    if (alive(worker)) process.kill(worker, 'SIGKILL');
  });

  const report = await runCli(['agent-state', 'run', '--agent', 'next', '--scope', 'src:write', '--json', '--', 'touch', 'src/next.flag'], { cwd: repo, env: { TMPDIR: leases } });
  assert.equal(report.code, 3, report.stderr);
  const json = jsonOf<RunJson>(report);
  assert.equal(json.state.state, 'blocked');
  assert.equal(json.state.blocked_reason, 'stale_lease');
  assert.equal(json.observation.lease?.stale, true);
  assert.equal(json.observation.lease?.holder?.agent_id, 'crashed');
  assert.equal(existsSync(join(repo, 'src/next.flag')), false);
  assert.equal(existsSync(json.observation.lease?.path ?? ''), true, 'the stale lease is left in place');
  // Reported again, unchanged, on the next attempt.
  const again = await runCli(['agent-state', 'run', '--agent', 'next', '--scope', 'src:write', '--', 'true'], { cwd: repo, env: { TMPDIR: leases } });
  assert.equal(again.code, 3);
  assert.match(again.stdout, /^blocked\/stale_lease: /);
});

test('a SIGTERM to agentscm is passed on to the command\'s group; the run still ends, reports and releases its lease', async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  const child = spawn(process.execPath, [...cliEntryArgv(), 'agent-state', 'run', '--agent', 'stopped', '--scope', 'src:write', '--json', '--', 'sh', '-c', 'echo $$ > src/worker.pid; exec sleep 30'], {
    cwd: repo,
    env: { ...process.env, TMPDIR: leases },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const out: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitFor(join(repo, 'src/worker.pid'));
  const worker = Number(readFileSync(join(repo, 'src/worker.pid'), 'utf8'));
  t.after(() => {
    if (alive(worker)) process.kill(worker, 'SIGKILL');
  });
  child.kill('SIGTERM');
  assert.equal(await exited, 1);
  const json = JSON.parse(Buffer.concat(out).toString('utf8')) as RunJson & { state: { result: { signal: string | null } }; observation: { containment: { signals_forwarded: string[] } } };
  assert.equal(json.state.state, 'failed');
  assert.equal(json.state.result.signal, 'SIGTERM');
  assert.deepEqual(json.observation.containment.signals_forwarded, ['SIGTERM']);
  assert.equal(existsSync(json.observation.lease?.path ?? ''), false);
  assert.equal(alive(worker), false);
});

test('an invalid agent id or scope is refused before anything runs (exit 2)', async (t) => {
  const repo = makeRepo(t);
  const env = { TMPDIR: tempDir(t) };
  for (const [args, code] of [
    [['--agent', 'a b', '--scope', 'src:write'], 'ID_INVALID'],
    [['--agent', 'a', '--task', 'no/slash', '--scope', 'src:write'], 'ID_INVALID'],
    [['--agent', 'a', '--scope', 'src/:write'], 'PATH_INVALID'],
    [['--agent', 'a', '--scope', 'src:write', '--scope', 'src:read'], 'AGENT_STATE_INVALID'],
    [['--agent', 'a', '--scope', 'src:execute'], 'USAGE'],
  ] as [string[], string][]) {
    const result = await runCli(['agent-state', 'run', ...args, '--', 'touch', 'ran.flag'], { cwd: repo, env });
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, new RegExp(`^error\\[${code}\\]`), args.join(' '));
    assert.equal(existsSync(join(repo, 'ran.flag')), false);
  }
});
