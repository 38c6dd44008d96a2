/**
 * Observed runs (docs/agent-state.md "Observed runs"): real git repositories, real processes,
 * the real lease directory; fault injection only through the hooks beside the real path.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { reconcileAgentStates } from '../../src/agent-state/operations.js';
import {
  observedRunExitCode,
  runObserved,
  type ObservedRunInput,
  type ObservedRunReport,
} from '../../src/agent-state/run.js';
import { tempDir } from '../helpers/tmp.js';
import { alive, git, makeRepo } from './fixture.js';

function run(
  t: { after: (fn: () => void) => void },
  cwd: string,
  command: string,
  extra: Partial<ObservedRunInput> = {},
): Promise<ObservedRunReport> {
  return runObserved({
    agent_id: 'builder',
    backend: 'subprocess',
    task_id: null,
    scopes: [{ path: 'src', access: 'write' }],
    command: 'sh',
    args: ['-c', command],
    cwd,
    stdout: 'stderr',
    ...extra,
  });
}

test('a change inside the write scope with exit 0 is completed, git-visible and ignored outputs listed', async (t) => {
  const repo = makeRepo(t);
  const report = await run(
    t,
    repo,
    'echo b > src/b.txt && echo more >> src/a.txt && mkdir -p src/build && echo o > src/out.log',
  );
  assert.equal(report.state.state, 'completed', report.state.result?.summary);
  assert.deepEqual(report.state.result?.changed_paths, ['src/a.txt', 'src/b.txt', 'src/build', 'src/out.log']);
  assert.deepEqual(
    report.history.map((s) => s.state),
    ['queued', 'working', 'completed'],
  );
  assert.deepEqual(
    report.history.map((s) => s.revision),
    [0n, 1n, 2n],
  );
  assert.equal(report.observation.git.stable, true);
  assert.equal(report.observation.lease?.released, true);
  assert.equal(existsSync(report.observation.lease?.path ?? ''), false);
  assert.equal(observedRunExitCode(report), 0);
});

test('a commit inside the scope completes; a second edit of an already modified file is seen', async (t) => {
  const repo = makeRepo(t);
  writeFileSync(join(repo, 'src/a.txt'), 'dirty before\n');
  const report = await run(
    t,
    repo,
    'echo again >> src/a.txt && echo n > src/n.txt && git add src/n.txt && git -c user.name=t -c user.email=t@x commit -qm n',
  );
  assert.equal(report.state.state, 'completed', report.state.result?.summary);
  assert.deepEqual(report.state.result?.changed_paths, ['src/a.txt', 'src/n.txt']);
  assert.notEqual(report.observation.git.before, report.observation.git.after);
});

test('a git-visible change outside every scope is a scope violation even on exit 0, and is not rolled back', async (t) => {
  const repo = makeRepo(t);
  const report = await run(t, repo, 'echo x >> docs/readme.md && echo y > src/y.txt');
  assert.equal(report.state.state, 'blocked');
  assert.equal(report.state.blocked_reason, 'scope_violation');
  assert.deepEqual(report.state.result?.scope_violations, ['docs/readme.md']);
  assert.equal(readFileSync(join(repo, 'docs/readme.md'), 'utf8'), 'docs\nx\n');
  assert.equal(observedRunExitCode(report), 1);
  // A read scope grants no write.
  const reader = await run(t, repo, 'echo z >> docs/readme.md', {
    scopes: [
      { path: 'src', access: 'write' },
      { path: 'docs', access: 'read' },
    ],
  });
  assert.deepEqual(reader.state.result?.scope_violations, ['docs/readme.md']);
});

test('an ignored file changed outside every scope is caught by the metadata guard', async (t) => {
  const repo = makeRepo(t, { 'logs/old.log': 'old\n' });
  // A same-size rewrite, an ignored create and an ignored delete: git sees none of them.
  for (const command of [
    'printf "new\\n" > logs/old.log',
    'echo n > logs/new.log',
    'rm logs/old.log',
    'chmod 600 logs/old.log',
    'mv logs/old.log logs/moved.log',
  ]) {
    writeFileSync(join(repo, 'logs/old.log'), 'old\n');
    rmSync(join(repo, 'logs/new.log'), { force: true });
    rmSync(join(repo, 'logs/moved.log'), { force: true });
    const report = await run(t, repo, command);
    assert.equal(report.observation.git.changed.length, 0, command);
    assert.equal(report.state.blocked_reason, 'scope_violation', `${command}: ${report.state.result?.summary ?? ''}`);
    assert.ok(
      report.observation.metadata_guard?.changed.some((p) => p.startsWith('logs/')),
      command,
    );
  }
});

test('the documented residual risk: a same-size rewrite whose timestamps are restored is visible only through ctime', async (t) => {
  const repo = makeRepo(t, { 'logs/old.log': 'old\n' });
  const when = new Date('2020-01-01T00:00:00Z');
  utimesSync(join(repo, 'logs/old.log'), when, when);
  const report = await run(t, repo, 'printf "NEW\\n" > logs/old.log && touch -d 2020-01-01T00:00:00Z logs/old.log');
  // ctime cannot be restored by a process, so the guard still sees the rewrite here.
  assert.equal(report.state.blocked_reason, 'scope_violation', report.state.result?.summary);
});

test('a changed file whose name has a control character counts, keeps a success unverified, and the report is still made', async (t) => {
  const repo = makeRepo(t);
  const inside = await run(t, repo, 'echo x > "src/new$(printf "\\nline")"');
  assert.equal(inside.state.state, 'idle', inside.state.result?.summary);
  assert.deepEqual(inside.state.result?.changed_paths, []);
  assert.match(inside.state.result?.summary ?? '', /1 changed path\(s\) have names with control characters/);
  const outside = await run(t, repo, 'echo x > "docs/new$(printf "\\tx")"');
  assert.equal(outside.state.blocked_reason, 'scope_violation');
  assert.deepEqual(outside.observation.scope_violations, ['docs/new\tx']);
  // The history reconciles to the final observation.
  assert.deepEqual(reconcileAgentStates(outside.history).state, outside.state);
});

test('a non-zero exit is failed; no git keeps a success idle', async (t) => {
  const repo = makeRepo(t);
  const failed = await run(t, repo, 'echo y > src/y.txt; exit 3');
  assert.equal(failed.state.state, 'failed');
  assert.equal(failed.state.result?.exit_code, 3);
  const plain = tempDir(t);
  mkdirSync(join(plain, 'src'));
  const idle = await run(t, plain, 'echo y > src/y.txt');
  assert.equal(idle.state.state, 'idle');
  assert.equal(idle.observation.git.available, false);
  assert.match(idle.state.result?.summary ?? '', /no git/);
});

test('a grandchild that tries to outlive the root is killed with its group, and the evidence recorded', async (t) => {
  const repo = makeRepo(t);
  // The grandchild ignores SIGTERM (and so does its sleep); the root waits until it has said so.
  const report = await run(
    t,
    repo,
    '(trap "" TERM; touch src/ready; sleep 30; echo late > src/late.txt) & while [ ! -e src/ready ]; do sleep 0.01; done; echo $! > src/grandchild.pid; exit 0',
    { graceMs: 300 },
  );
  const pid = Number(readFileSync(join(repo, 'src/grandchild.pid'), 'utf8'));
  const c = report.observation.containment;
  assert.ok(c !== null);
  assert.equal(c.started, true);
  assert.ok(c.descendants_at_root_exit.includes(pid), JSON.stringify(c));
  assert.deepEqual(c.signals_sent, ['SIGTERM', 'SIGKILL']);
  assert.equal(c.group_empty, true);
  assert.equal(alive(pid), false);
  assert.match(report.state.result?.summary ?? '', /descendant/);
});

test('a time-out terminates the group and fails the run', async (t) => {
  const repo = makeRepo(t);
  const report = await run(t, repo, 'sleep 30', { timeoutMs: 300, graceMs: 200 });
  assert.equal(report.state.state, 'failed');
  assert.equal(report.state.result?.outcome, 'timed_out');
  assert.equal(report.observation.containment?.group_empty, true);
});

test('an attachment failure keeps the command from starting', async (t) => {
  const repo = makeRepo(t);
  const report = await run(t, repo, 'echo ran > src/ran.txt', { verifyGroup: () => false });
  assert.equal(report.state.state, 'failed');
  assert.equal(report.observation.containment?.started, false);
  assert.equal(existsSync(join(repo, 'src/ran.txt')), false);
  assert.equal(report.observation.lease?.released, true);
});

test('a snapshot race (an entry vanishing while the guard reads it) keeps a success idle', async (t) => {
  const repo = makeRepo(t);
  writeFileSync(join(repo, 'docs/vanish.log'), 'ignored\n');
  let pass = 0;
  const report = await run(t, repo, 'echo y > src/y.txt', {
    snapshotHooks: {
      beforeEntry: (path) => {
        // The second look (the after-snapshot) finds the entry listed but gone.
        if (path === 'docs/vanish.log' && pass++ === 1) unlinkSync(join(repo, path));
      },
    },
  });
  assert.equal(report.state.state, 'idle', report.state.result?.summary);
  assert.equal(report.observation.metadata_guard?.complete, false);
  assert.equal(report.observation.metadata_guard?.problem, 'race');
});

test('an I/O error while a snapshot is taken fails closed: the success stays idle', async (t) => {
  const repo = makeRepo(t);
  for (const failing of ['docs/readme.md', 'src/a.txt']) {
    let pass = 0;
    const report = await run(t, repo, 'echo y >> src/y.txt', {
      snapshotHooks: {
        beforeEntry: (path) => {
          if (path === failing && pass++ === 1) throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
        },
      },
    });
    assert.equal(report.state.state, 'idle', `${failing}: ${report.state.result?.summary ?? ''}`);
    const snapshot = failing.startsWith('src/') ? report.observation.scope_snapshot : report.observation.metadata_guard;
    assert.equal(snapshot?.problem, 'io_error', failing);
  }
});

test('more than 20 write scopes keeps a success out of completed', async (t) => {
  const repo = makeRepo(t);
  const scopes = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ path: i === 0 ? 'src' : `d${i}`, access: 'write' as const }));
  const at = await run(t, repo, 'echo y > src/y.txt', { scopes: scopes(20) });
  assert.equal(at.state.state, 'completed', at.state.result?.summary);
  const past = await run(t, repo, 'echo z > src/z.txt', { scopes: scopes(21) });
  assert.equal(past.state.state, 'idle');
  assert.equal(past.observation.scope_snapshot?.problem, 'bound');
});

test('without scopes, any change is outside scope and no lease is taken', async (t) => {
  const repo = makeRepo(t);
  const quiet = await run(t, repo, 'true', { scopes: [] });
  assert.equal(quiet.state.state, 'completed');
  assert.equal(quiet.observation.lease, null);
  const noisy = await run(t, repo, 'echo y > src/y.txt', { scopes: [] });
  assert.deepEqual(noisy.state.result?.scope_violations, ['src/y.txt']);
});

test('a commit reaching outside the scope is a violation', async (t) => {
  const repo = makeRepo(t);
  const report = await run(
    t,
    repo,
    'echo x >> top.txt && git add top.txt && git -c user.name=t -c user.email=t@x commit -qm t',
  );
  assert.deepEqual(report.state.result?.scope_violations, ['top.txt']);
  assert.equal(git(repo, 'status', '--porcelain'), '');
});
