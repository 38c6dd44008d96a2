/**
 * The mutation lease across real `agentscm agent-state run` processes: one writer per git root
 * whichever subdirectory it starts from, and a lease left by a SIGKILLed run reported as stale
 * and left in place.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import test from 'node:test';

import { cliEntryArgv, jsonOf, runCli } from '../helpers/cli.js';
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
  observation: {
    lease: { taken: boolean; path: string; stale: boolean; holder: { agent_id: string; pid: number } | null } | null;
  };
}

test('two runs from different subdirectories of one repository: the second is blocked/conflict before it starts', async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  mkdirSync(join(repo, 'docs/deep'), { recursive: true });
  const env = { TMPDIR: leases };
  const first = runCli(
    [
      'agent-state',
      'run',
      '--agent',
      'first',
      '--scope',
      'src:write',
      '--json',
      '--',
      'sh',
      '-c',
      'touch started.flag; while [ ! -e release.flag ]; do sleep 0.05; done',
    ],
    { cwd: join(repo, 'src'), env },
  );
  await waitFor(join(repo, 'src/started.flag'));
  const second = await runCli(
    ['agent-state', 'run', '--agent', 'second', '--scope', 'docs:write', '--json', '--', 'touch', 'second-ran.flag'],
    { cwd: join(repo, 'docs/deep'), env },
  );
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
  const third = await runCli(
    ['agent-state', 'run', '--agent', 'second', '--scope', 'docs:write', '--', 'touch', 'third.flag'],
    { cwd: join(repo, 'docs/deep'), env },
  );
  assert.equal(third.code, 0, third.stderr + third.stdout);
});

test('a lease left by a SIGKILLed run is reported as stale and never removed', async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  const child = spawn(
    process.execPath,
    [
      ...cliEntryArgv(),
      'agent-state',
      'run',
      '--agent',
      'crashed',
      '--scope',
      'src:write',
      '--',
      'sh',
      '-c',
      'echo $$ > src/worker.pid; exec sleep 30',
    ],
    {
      cwd: repo,
      env: { ...process.env, TMPDIR: leases },
      stdio: 'ignore',
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitFor(join(repo, 'src/worker.pid'));
  child.kill('SIGKILL');
  await exited;
  // The contained worker is in its own group and outlives the killed controller: end it here.
  const worker = Number(readFileSync(join(repo, 'src/worker.pid'), 'utf8'));
  t.after(() => {
    if (alive(worker)) process.kill(worker, 'SIGKILL');
  });

  const report = await runCli(
    ['agent-state', 'run', '--agent', 'next', '--scope', 'src:write', '--json', '--', 'touch', 'src/next.flag'],
    { cwd: repo, env: { TMPDIR: leases } },
  );
  assert.equal(report.code, 3, report.stderr);
  const json = jsonOf<RunJson>(report);
  assert.equal(json.state.state, 'blocked');
  assert.equal(json.state.blocked_reason, 'stale_lease');
  assert.equal(json.observation.lease?.stale, true);
  assert.equal(json.observation.lease?.holder?.agent_id, 'crashed');
  assert.equal(existsSync(join(repo, 'src/next.flag')), false);
  assert.equal(existsSync(json.observation.lease?.path ?? ''), true, 'the stale lease is left in place');
  // Reported again, unchanged, on the next attempt.
  const again = await runCli(['agent-state', 'run', '--agent', 'next', '--scope', 'src:write', '--', 'true'], {
    cwd: repo,
    env: { TMPDIR: leases },
  });
  assert.equal(again.code, 3);
  assert.match(again.stdout, /^blocked\/stale_lease: /);
});

test("a SIGTERM to agentscm is passed on to the command's group; the run still ends, reports and releases its lease", async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  const child = spawn(
    process.execPath,
    [
      ...cliEntryArgv(),
      'agent-state',
      'run',
      '--agent',
      'stopped',
      '--scope',
      'src:write',
      '--json',
      '--',
      'sh',
      '-c',
      'echo $$ > src/worker.pid; exec sleep 30',
    ],
    {
      cwd: repo,
      env: { ...process.env, TMPDIR: leases },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
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
  const json = JSON.parse(Buffer.concat(out).toString('utf8')) as RunJson & {
    state: { result: { signal: string | null } };
    observation: { containment: { signals_forwarded: string[] } };
  };
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

/** The lease file of a repository, named as the specification's lease (computed here, not by the code under test). */
function specLeasePath(dir: string, repo: string): string {
  return join(
    dir,
    `botte-mutation-lease-v1-${createHash('sha256').update(realpathSync(repo), 'utf8').digest('hex').slice(0, 32)}.json`,
  );
}

test('issue #25 item 16: a botte-mutation-lease-v1 written by hand blocks a writer while its holder lives, then reads as stale; the file is never touched', async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => holder.kill('SIGKILL'));
  const exited = new Promise((resolve) => holder.once('exit', resolve));
  // The documented format, smallest form: kind, agent_id, pid, hostname, acquired_at_ms.
  const text = `${JSON.stringify({ kind: 'botte-mutation-lease-v1', agent_id: 'other-writer', pid: holder.pid, hostname: hostname(), acquired_at_ms: Date.now() })}\n`;
  const path = specLeasePath(leases, repo);
  writeFileSync(path, text);
  const blocked = await runCli(
    ['agent-state', 'run', '--agent', 'mine', '--scope', 'src:write', '--json', '--', 'touch', 'src/ran.flag'],
    { cwd: join(repo, 'src'), env: { TMPDIR: leases } },
  );
  assert.equal(blocked.code, 3, blocked.stderr + blocked.stdout);
  const json = jsonOf<RunJson>(blocked);
  assert.equal(json.state.blocked_reason, 'conflict');
  assert.equal(json.observation.lease?.path, path);
  assert.equal(json.observation.lease?.holder?.agent_id, 'other-writer');
  assert.equal(existsSync(join(repo, 'src/ran.flag')), false);
  holder.kill('SIGKILL');
  await exited;
  const stale = await runCli(
    ['agent-state', 'run', '--agent', 'mine', '--scope', 'src:write', '--', 'touch', 'src/ran.flag'],
    { cwd: repo, env: { TMPDIR: leases } },
  );
  assert.equal(stale.code, 3);
  assert.match(stale.stdout, /^blocked\/stale_lease: /);
  assert.equal(readFileSync(path, 'utf8'), text, 'the hand-written lease is left as it was');
  // A file at the lease's name that agentscm cannot read still holds the lease.
  writeFileSync(path, 'held by a writer of another format\n');
  const unreadable = await runCli(
    ['agent-state', 'run', '--agent', 'mine', '--scope', 'src:write', '--', 'touch', 'src/ran.flag'],
    { cwd: repo, env: { TMPDIR: leases } },
  );
  assert.equal(unreadable.code, 3);
  assert.match(unreadable.stdout, /^blocked\/conflict: /);
  assert.equal(existsSync(join(repo, 'src/ran.flag')), false);
});

test('issue #25 item 16: the lease agentscm writes is the file the specification names, in exactly the documented format', async (t) => {
  const repo = makeRepo(t);
  const leases = tempDir(t);
  const run = runCli(
    [
      'agent-state',
      'run',
      '--agent',
      'writer',
      '--task',
      'task-1',
      '--scope',
      'src:write',
      '--scope',
      'docs:read',
      '--',
      'sh',
      '-c',
      'touch started.flag; while [ ! -e release.flag ]; do sleep 0.05; done',
    ],
    { cwd: join(repo, 'src'), env: { TMPDIR: leases } },
  );
  await waitFor(join(repo, 'src/started.flag'));
  const path = specLeasePath(leases, repo);
  assert.deepEqual(
    readdirSync(leases).filter((name) => name.includes('mutation-lease')),
    [basename(path)],
  );
  const text = readFileSync(path, 'utf8');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.match(text, /^\{[^\n]*\}\n$/, 'one JSON object on one line');
  const record = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(record), [
    'kind',
    'git_root',
    'agent_id',
    'scopes',
    'pid',
    'hostname',
    'process_start',
    'acquired_at_ms',
    'token',
  ]);
  assert.equal(record.kind, 'botte-mutation-lease-v1');
  assert.equal(record.git_root, realpathSync(repo));
  assert.equal(record.agent_id, 'writer');
  assert.deepEqual(record.scopes, ['src']);
  assert.equal(record.hostname, hostname());
  assert.ok(Number.isSafeInteger(record.pid) && Number.isSafeInteger(record.acquired_at_ms));
  assert.ok(typeof record.process_start === 'string' || record.process_start === null);
  assert.match(String(record.token), /^[0-9a-f]{32}$/);
  mkdirSync(join(repo, 'src/release.flag'));
  assert.equal((await run).code, 0);
  assert.equal(existsSync(path), false);
});
