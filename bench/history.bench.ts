/**
 * History benchmark (docs/agent-tasks.md "Journal growth"): the hub bench's cycle (32 clients,
 * claim -> heartbeat -> result, each operation authenticated as the hub does, bench/_hub-cycle.ts)
 * run in process on a fresh store and on a store grown to AGENTSCM_BENCH_HISTORY_TASKS finished
 * tasks (default 75,000) with AGENTSCM_BENCH_HISTORY_VERSIONS versions per Change (default 300),
 * alternating round by round in the same run. Each round also asks `requirements` and `next`.
 * Prints the grown/fresh throughput ratio (target >= 0.9), the p50 of `requirements`, `next` and
 * `claim` on each store and their ratios (target <= 1.2), the bytes of journal per cycle, the
 * `node -e 0` floor, and one JSON summary line.
 *
 * The grown store is built quickly: AGENTSCM_BENCH_HISTORY_SEED real rounds through the facade,
 * every Change version through the native library (a version and its review context, as
 * `checkpoint` writes them), then the journal rows of those real finished cycles (task, attempt,
 * assertion, the three committed requests) replicated by SQL with fresh task, attempt and request
 * ids over the bench Change's older versions and over further Changes. A replica keeps its
 * template's canonical bytes; the columns the operations index and read carry the fresh values.
 * AGENTSCM_BENCH_HISTORY_KEEP=1 keeps the stores and prints where they are.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { openStore } from '../src/tasks/store.js';
import type { TestGrant } from '../test/support/hub.js';
import { assertionRequest, claimedOf, claimRequest, mutationRequest } from '../test/support/task-requests.js';
import { CHANGE_ID, checkpoint } from '../test/support/tasks.js';
import {
  CLIENTS,
  facadeCall,
  facadeCycle,
  freshTasks,
  makeSide,
  percentile,
  taskRefsOf,
  type Side,
} from './_hub-cycle.js';

const TASKS = Number(process.env.AGENTSCM_BENCH_HISTORY_TASKS ?? 75_000);
const VERSIONS = Number(process.env.AGENTSCM_BENCH_HISTORY_VERSIONS ?? 300);
const ROUNDS = Number(process.env.AGENTSCM_BENCH_HISTORY_ROUNDS ?? 12);
const WARMUP = Number(process.env.AGENTSCM_BENCH_HISTORY_WARMUP ?? 2);
const SEED = Number(process.env.AGENTSCM_BENCH_HISTORY_SEED ?? 2);
/** `requirements` asked this many times per round (by different clients). */
const REQUIREMENTS_PER_ROUND = 8;

function journalPath(side: Side): string {
  return join(side.hub.store.dataDir, 'skill-workflows', 'state.sqlite');
}

const fresh = (salt: string, n: number): string => createHash('sha256').update(`${salt}:${n}`).digest('hex');

/**
 * Replicate the finished cycles the journal holds (the seed rounds) until it retains `tasks`
 * tasks: the bench Change's older versions first (32 steps each), then further Changes of
 * VERSIONS versions each. Returns the number of tasks inserted.
 */
function replicate(side: Side, tasks: number, benchVersions: number): number {
  const db = new Database(journalPath(side));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    const templates = db
      .prepare(
        `SELECT t.seq, t.step_id FROM agent_tasks t JOIN agent_task_attempts a ON a.task_seq = t.seq
         WHERE a.state = 'finished' ORDER BY t.seq LIMIT ${CLIENTS}`,
      )
      .all() as { seq: number; step_id: string }[];
    if (templates.length < CLIENTS) throw new Error('the seed rounds left too few finished tasks');
    const taskOf = db.prepare('SELECT * FROM agent_tasks WHERE seq = ?');
    const attemptOf = db.prepare('SELECT * FROM agent_task_attempts WHERE task_seq = ?');
    const assertionOf = db.prepare('SELECT * FROM agent_task_assertions WHERE task_seq = ?');
    const requestsOf = db.prepare('SELECT * FROM agent_task_requests WHERE task_id = ? ORDER BY seq');
    type Row = Record<string, unknown>;
    const shapes = templates.map((t) => {
      const task = taskOf.get(t.seq) as Row;
      return {
        task,
        attempt: attemptOf.get(t.seq) as Row,
        assertion: assertionOf.get(t.seq) as Row,
        requests: requestsOf.all(task.task_id) as Row[],
      };
    });
    const insert = (table: string, row: Row): number => {
      const columns = Object.keys(row).filter((c) => c !== 'seq');
      const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
      return Number(db.prepare(sql).run(...columns.map((c) => row[c])).lastInsertRowid);
    };
    let n = 0;
    db.transaction(() => {
      for (let version = 0; n < tasks; version++) {
        const change =
          version < benchVersions ? CHANGE_ID : `grown-${Math.floor((version - benchVersions) / VERSIONS)}`;
        for (const shape of shapes) {
          if (n >= tasks) break;
          n += 1;
          const taskId = `t-${fresh('task', n).slice(0, 40)}`;
          const attemptId = `a-${fresh('attempt', n).slice(0, 40)}`;
          const taskSeq = insert('agent_tasks', { ...shape.task, task_id: taskId, change_id: change });
          insert('agent_task_attempts', {
            ...shape.attempt,
            task_seq: taskSeq,
            attempt_id: attemptId,
            execution_operation_id: `op-grown-${n}`,
          });
          insert('agent_task_assertions', {
            ...shape.assertion,
            task_seq: taskSeq,
            task_id: taskId,
            attempt_id: attemptId,
            request_id: `r-grown-${n}`,
          });
          for (const request of shape.requests)
            insert('agent_task_requests', {
              ...request,
              task_id: taskId,
              attempt_id: attemptId,
              request_id: `${String(request.kind).slice(0, 1)}-grown-${n}`,
            });
        }
      }
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return n;
  } finally {
    db.close();
  }
}

/** The journal's size in bytes (pages in use), checkpointed first. */
function journalBytes(side: Side): number {
  const db = new Database(journalPath(side), { readonly: true });
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    const free = db.pragma('freelist_count', { simple: true }) as number;
    const size = db.pragma('page_size', { simple: true }) as number;
    return (pages - free) * size;
  } finally {
    db.close();
  }
}

interface Samples {
  cycleMs: number;
  cycles: number;
  requirements: number[];
  next: number[];
  claim: number[];
  heartbeat: number[];
  result: number[];
}

const samples = (): Samples => ({
  cycleMs: 0,
  cycles: 0,
  requirements: [],
  next: [],
  claim: [],
  heartbeat: [],
  result: [],
});

function timed<T>(into: number[] | null, fn: () => T): T {
  const start = performance.now();
  const value = fn();
  if (into !== null) into.push(performance.now() - start);
  return value;
}

/** One round: a new Change version (untimed), `requirements` and `next`, then every client's cycle. */
function round(side: Side, s: Samples | null, n: { value: number }): void {
  checkpoint(side.hub.store, side.hub.store.revision);
  const tasks = freshTasks(side, side.grants[0]?.token ?? '');
  for (let i = 0; i < REQUIREMENTS_PER_ROUND; i++) {
    const grant = side.grants[i] as TestGrant;
    timed(s?.requirements ?? null, () => taskRefsOf(facadeCall(side, grant, 'requirements', null)));
  }
  const start = performance.now();
  side.grants.forEach((grant, i) => {
    const task = tasks[i];
    if (task === undefined) throw new Error('too few tasks');
    timed(s?.next ?? null, () => facadeCall(side, grant, 'next', null));
    n.value += 1;
    const k = n.value;
    const claimed = claimedOf(
      timed(s?.claim ?? null, () =>
        facadeCall(side, grant, 'claim', claimRequest(grant.actor, task, `c-${k}`, `op-${k}`)),
      ),
    );
    timed(s?.heartbeat ?? null, () =>
      facadeCall(side, grant, 'heartbeat', mutationRequest(grant.actor, claimed, 'heartbeat', `h-${k}`)),
    );
    timed(s?.result ?? null, () =>
      facadeCall(side, grant, 'result', assertionRequest(grant.actor, claimed, `r-${k}`, 'failed')),
    );
  });
  if (s !== null) {
    // The cycle rate counts claim -> heartbeat -> result (next is timed on its own).
    const spent = performance.now() - start;
    const nextMs = s.next.slice(-CLIENTS).reduce((a, b) => a + b, 0);
    s.cycleMs += spent - nextMs;
    s.cycles += CLIENTS;
  }
}

/** Median wall time of `node -e 0`, spawned a few times: the floor under any process. */
function nodeFloorMs(): number {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[2] ?? 0;
}

function run(): void {
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-history-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    const f = (x: number): string => x.toFixed(1);
    const out = (line: string): boolean => process.stdout.write(`${line}\n`);
    const floor = nodeFloorMs();
    const n = { value: 0 };
    const freshSide = makeSide();
    const grownSide = makeSide();
    const growStart = performance.now();
    for (let i = 0; i < SEED; i++) {
      for (const side of [freshSide, grownSide]) {
        if (i > 0) checkpoint(side.hub.store, side.hub.store.revision);
        const tasks = freshTasks(side, side.grants[0]?.token ?? '');
        side.grants.forEach((grant, c) => facadeCycle(side, grant, tasks[c] as (typeof tasks)[number], (n.value += 1)));
      }
    }
    // Every version of the bench Change (the timed rounds add theirs on top).
    const benchVersions = Math.max(0, VERSIONS - SEED - WARMUP - ROUNDS);
    for (let v = 0; v < benchVersions; v++) checkpoint(grownSide.hub.store, grownSide.hub.store.revision);
    grownSide.connections.close();
    const replicated = replicate(grownSide, TASKS - SEED * CLIENTS, benchVersions);
    const grown: Side = { ...grownSide, connections: openStore(grownSide.hub.store.dataDir, { mode: 'write' }) };
    out(
      `grown store: ${replicated + SEED * CLIENTS} finished tasks, Change ${CHANGE_ID} at version ` +
        `${grown.hub.store.changeVersion} (${f((performance.now() - growStart) / 1000)} s to build)`,
    );
    const bytesBefore = journalBytes(freshSide);
    const fs = samples();
    const gs = samples();
    for (let r = 0; r < WARMUP + ROUNDS; r++) {
      const measured = r >= WARMUP;
      // Alternate which store goes first, so that neither always follows the other's commits.
      const order: [Side, Samples][] =
        r % 2 === 0
          ? [
              [freshSide, fs],
              [grown, gs],
            ]
          : [
              [grown, gs],
              [freshSide, fs],
            ];
      for (const [side, s] of order) round(side, measured ? s : null, n);
    }
    const bytesPerCycle = (journalBytes(freshSide) - bytesBefore) / ((WARMUP + ROUNDS) * CLIENTS);
    freshSide.connections.close();
    grown.connections.close();
    const p50 = (xs: number[]): number =>
      percentile(
        [...xs].sort((a, b) => a - b),
        50,
      );
    const rate = (s: Samples): number => s.cycles / (s.cycleMs / 1000);
    const ratio = rate(gs) / rate(fs);
    out(
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; node -e 0 floor ${f(floor)} ms`,
    );
    out(`cycles: ${fs.cycles} per store (${CLIENTS} clients x ${ROUNDS} rounds, claim -> heartbeat -> result)`);
    out(`fresh store: ${f(rate(fs))} cycles/s; grown store: ${f(rate(gs))} cycles/s`);
    out(`throughput ratio grown/fresh: ${ratio.toFixed(2)} (target >= 0.9) ${ratio >= 0.9 ? 'ok' : 'BELOW TARGET'}`);
    const ops = ['requirements', 'next', 'claim', 'heartbeat', 'result'] as const;
    const ratios: Record<string, number> = {};
    for (const op of ops) {
      const a = p50(fs[op]);
      const b = p50(gs[op]);
      ratios[op] = b / a;
      const target =
        op === 'heartbeat' || op === 'result' ? '' : ` (target <= 1.2) ${b / a <= 1.2 ? 'ok' : 'ABOVE TARGET'}`;
      out(`${op} p50: fresh ${a.toFixed(2)} ms, grown ${b.toFixed(2)} ms, ratio ${(b / a).toFixed(2)}${target}`);
    }
    out(`journal growth: ${Math.round(bytesPerCycle)} bytes per cycle (fresh store, pages in use)`);
    const r2 = (x: number): number => Number(x.toFixed(2));
    const summary = {
      bench: 'history',
      clients: CLIENTS,
      rounds: ROUNDS,
      grown_tasks: replicated + SEED * CLIENTS,
      versions_per_change: VERSIONS,
      fresh_cycles_per_s: r2(rate(fs)),
      grown_cycles_per_s: r2(rate(gs)),
      throughput_ratio: r2(ratio),
      throughput_target: 0.9,
      requirements_p50_ratio: r2(ratios.requirements ?? 0),
      next_p50_ratio: r2(ratios.next ?? 0),
      claim_p50_ratio: r2(ratios.claim ?? 0),
      p50_target: 1.2,
      fresh_p50_ms: Object.fromEntries(ops.map((op) => [op, r2(p50(fs[op]))])),
      grown_p50_ms: Object.fromEntries(ops.map((op) => [op, r2(p50(gs[op]))])),
      journal_bytes_per_cycle: Math.round(bytesPerCycle),
      node_floor_ms: r2(floor),
      load_average: loadavg().map(r2),
    };
    out(JSON.stringify(summary));
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // AGENTSCM_BENCH_HISTORY_KEEP=1 keeps both stores for a profile (EXPLAIN QUERY PLAN, --cpu-prof).
    if (process.env.AGENTSCM_BENCH_HISTORY_KEEP === '1') process.stdout.write(`stores kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

export function main(): Promise<void> {
  return Promise.resolve().then(run);
}
