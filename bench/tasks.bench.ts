/**
 * Agent-task benchmark (issue 5 "Benchmark"): claim → heartbeat → result cycles per second
 * through the local facade, in process, against raw better-sqlite3 write transactions per
 * second on the same kind of file (WAL, synchronous FULL, BEGIN IMMEDIATE, one small insert),
 * measured in the same run. Prints both rates and the ratio (target ≥ 0.3). A cycle commits the
 * journal three times: the claim fsynced (synchronous=FULL), the heartbeat and the result
 * crash-safe (synchronous=NORMAL) — docs/agent-tasks.md "Durability".
 *
 * The store holds a requirement of 32 command steps (the definition's bound); every cycle
 * claims, heartbeats and reports one of them, and a new Change version (untimed) gives 32 fresh
 * tasks when they are used up. AGENTSCM_BENCH_TASK_CYCLES sets the number of timed cycles.
 *
 * Both sides are measured in steady state: AGENTSCM_BENCH_TASK_WARMUP cycles (default 300) and
 * five times as many raw transactions run untimed first, so that the code is compiled by the
 * JIT and every WAL has wrapped at least once (an fsync of a WAL that still grows also writes
 * the file's new size and blocks: on the development VM a raw transaction costs about 0.5 ms
 * while its WAL grows and 0.2–0.3 ms once it is reused). AGENTSCM_BENCH_TASK_WARMUP=0 measures
 * from a cold start instead. The floor line (tasks-floor.ts) runs only the SQLite statements of
 * a cycle in a leaner layout than agentscm's, with no agentscm code, in the same rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { encodeCanonical } from '../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../src/contracts/json/json-value.js';
import type { AgentRef } from '../src/contracts/task/common.js';
import { callTaskOperation } from '../src/tasks/facade.js';
import { openStore } from '../src/tasks/store.js';
import { assertionRequest, call, claimedOf, claimRequest, mutationRequest } from '../test/support/task-requests.js';
import { checkpoint, context, FakeClock, makeTaskStore, type StepSpec } from '../test/support/tasks.js';
import { leanFloorRunner } from './tasks-floor.js';

const CYCLES = Number(process.env.AGENTSCM_BENCH_TASK_CYCLES ?? 200);
const WARMUP = Number(process.env.AGENTSCM_BENCH_TASK_WARMUP ?? 300);
const STEPS: StepSpec[] = Array.from({ length: 32 }, (_, i) => ({ id: `step-${i}`, kind: 'command' as const }));
const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'bench' };

interface Timing {
  ms: number;
  count: number;
}

/** Time spent per facade operation across the timed cycles (the breakdown line). */
interface Breakdown {
  claim: number;
  heartbeat: number;
  result: number;
}

/** A facade runner over one store: each call times `cycles` claim → heartbeat → result cycles. */
function facadeRunner(dir: string): {
  run: (cycles: number, into: Timing, split?: Breakdown) => void;
  close: () => void;
} {
  const store = makeTaskStore(dir, STEPS);
  const clock = new FakeClock();
  const connections = openStore(store.dataDir, { mode: 'write' });
  const session = () => ({ ...context(store, ALICE, clock), store: connections });
  let ctx = session();
  const fresh = () =>
    (call(ctx, 'requirements').tasks as JsonObject[]).map((row) => ({
      task_id: row.task_id as string,
      task_digest: row.task_digest as string,
    }));
  let tasks = fresh();
  let n = 0;
  return {
    run(cycles: number, into: Timing, split?: Breakdown): void {
      for (let i = 0; i < cycles; i++) {
        if (tasks.length === 0) {
          checkpoint(store, store.revision);
          ctx = session();
          tasks = fresh();
        }
        const task = tasks.shift();
        if (task === undefined) throw new Error('no task');
        n += 1;
        // Only the facade is timed: each request document is built and encoded by the client
        // before its clock starts (a client sends bytes it already holds).
        const claimInput = encodeCanonical(claimRequest(ALICE, task, `c-${n}`, `op-${n}`));
        let start = performance.now();
        const claimed = claimedOf(callTaskOperation(ctx, 'claim', claimInput) as JsonObject);
        const claimMs = performance.now() - start;
        // The fake clock moves between claim and heartbeat, so that the renewal changes the
        // attempt's expiry (SQLite does not rewrite a row whose bytes stay the same).
        clock.advance(1);
        const heartbeatInput = encodeCanonical(mutationRequest(ALICE, claimed, 'heartbeat', `h-${n}`));
        start = performance.now();
        callTaskOperation(ctx, 'heartbeat', heartbeatInput);
        const heartbeatMs = performance.now() - start;
        const resultInput = encodeCanonical(assertionRequest(ALICE, claimed, `r-${n}`, 'failed'));
        start = performance.now();
        callTaskOperation(ctx, 'result', resultInput);
        const resultMs = performance.now() - start;
        into.ms += claimMs + heartbeatMs + resultMs;
        into.count += 1;
        if (split !== undefined) {
          split.claim += claimMs;
          split.heartbeat += heartbeatMs;
          split.result += resultMs;
        }
        clock.advance(1);
      }
    },
    close: () => connections.close(),
  };
}

/** Raw better-sqlite3 writer transactions on a WAL, synchronous FULL file: one small insert each. */
function rawRunner(dir: string): { run: (count: number, into: Timing) => void; close: () => void } {
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, request_id TEXT NOT NULL, body BLOB NOT NULL) STRICT');
  const insert = db.prepare('INSERT INTO rows (request_id, body) VALUES (?, ?)');
  const body = Buffer.alloc(512, 7);
  const write = db.transaction((i: number) => insert.run(`r-${i}`, body));
  let n = 0;
  return {
    run(count: number, into: Timing): void {
      const start = performance.now();
      for (let i = 0; i < count; i++) write.immediate(n++);
      into.ms += performance.now() - start;
      into.count += count;
    },
    close: () => db.close(),
  };
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-tasks-'));
  try {
    const facade = facadeRunner(join(dir, 'store'));
    const raw = rawRunner(dir);
    const floor = leanFloorRunner(dir);
    const untimed: Timing = { ms: 0, count: 0 };
    process.stderr.write(
      `warming up: ${WARMUP} cycles, ${WARMUP} floor cycles and ${WARMUP * 5} raw transactions (untimed)\n`,
    );
    facade.run(Math.max(2, WARMUP), untimed);
    floor.run(Math.max(2, WARMUP));
    raw.run(Math.max(5, WARMUP * 5), untimed);
    // Interleave small batches so that every side sees the same machine load.
    const rounds = Math.max(1, Math.round(CYCLES / 10));
    const cycles: Timing = { ms: 0, count: 0 };
    const floorCycles: Timing = { ms: 0, count: 0 };
    const transactions: Timing = { ms: 0, count: 0 };
    const split: Breakdown = { claim: 0, heartbeat: 0, result: 0 };
    for (let round = 0; round < rounds; round++) {
      raw.run(15, transactions);
      facade.run(10, cycles, split);
      floorCycles.ms += floor.run(10);
      floorCycles.count += 10;
      raw.run(15, transactions);
    }
    facade.close();
    floor.close();
    raw.close();
    const rate = (t: Timing): number => t.count / (t.ms / 1000);
    const rawRate = rate(transactions);
    const ratio = rate(cycles) / rawRate;
    const regime =
      WARMUP > 0 ? `steady state, after ${WARMUP} warm-up cycles and ${WARMUP * 5} raw transactions` : 'cold start';
    process.stdout.write(
      `raw better-sqlite3 write transactions: ${rawRate.toFixed(1)}/s (${transactions.count}; WAL, synchronous=FULL, BEGIN IMMEDIATE, one 512-byte insert each; ${regime})\n`,
    );
    process.stdout.write(
      `facade claim→heartbeat→result cycles: ${rate(cycles).toFixed(1)}/s (${cycles.count} cycles; journal commits: claim synchronous=FULL, heartbeat and result synchronous=NORMAL)\n`,
    );
    const per = (ms: number, count: number): string => (ms / Math.max(1, count)).toFixed(3);
    process.stdout.write(
      `per cycle: ${per(cycles.ms, cycles.count)} ms (claim ${per(split.claim, cycles.count)}, heartbeat ${per(split.heartbeat, cycles.count)}, result ${per(split.result, cycles.count)}); per raw transaction: ${per(transactions.ms, transactions.count)} ms\n`,
    );
    process.stdout.write(
      `floor, SQLite statements only in a leaner layout (bench/tasks-floor.ts): ${rate(floorCycles).toFixed(1)} cycles/s, ${per(floorCycles.ms, floorCycles.count)} ms per cycle, ratio ${(rate(floorCycles) / rawRate).toFixed(3)}\n`,
    );
    process.stdout.write(
      `ratio cycles/transactions: ${ratio.toFixed(3)} (target ≥ 0.3) ${ratio >= 0.3 ? 'OK' : 'BELOW TARGET'}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return Promise.resolve();
}
