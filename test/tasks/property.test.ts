/**
 * Property: random interleavings of 2–8 actors claiming, heartbeating, cancelling, reconciling
 * and reporting two tasks, with the clock jumping past leases, never yield two live attempts for
 * one task nor a fence that goes backward (docs/agent-tasks.md "State machine": claims
 * serialize per logical task; fences increase monotonically; only explicit reconciliation
 * supersedes). Every refusal must be a typed AgentscmError other than INTERNAL.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';

import { isAgentscmError } from '../../src/contracts/errors.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { journalPaths } from '../../src/workflows/journal.js';
import {
  assertionRequest,
  call,
  claimedOf,
  claimRequest,
  mutationRequest,
  taskRef,
  type Claimed,
  type TaskRef,
} from '../support/task-requests.js';
import { context, FakeClock, makeTaskStore } from '../support/tasks.js';

type Step =
  | { readonly op: 'claim'; readonly actor: number; readonly task: number; readonly leaseMs: number }
  | { readonly op: 'heartbeat' | 'cancel' | 'reconcile' | 'result'; readonly actor: number; readonly target: number }
  | { readonly op: 'advance'; readonly ms: number };

const stepArb = (actors: number): fc.Arbitrary<Step> =>
  fc.oneof(
    fc.record({
      op: fc.constant('claim' as const),
      actor: fc.nat(actors - 1),
      task: fc.nat(1),
      leaseMs: fc.integer({ min: 1, max: 5000 }),
    }),
    fc.record({
      op: fc.constantFrom('heartbeat' as const, 'cancel' as const, 'reconcile' as const, 'result' as const),
      actor: fc.nat(actors - 1),
      target: fc.nat(1000),
    }),
    fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 6000 }) }),
  );

const scenarioArb = fc
  .integer({ min: 2, max: 8 })
  .chain((actors) =>
    fc.record({ actors: fc.constant(actors), steps: fc.array(stepArb(actors), { minLength: 5, maxLength: 40 }) }),
  );

interface AttemptRow {
  task_id: string;
  fence: string;
  state: string;
  lease_expires_at_ms: number;
}

function checkInvariants(dataDir: string, nowMs: number, highest: Map<string, bigint>): void {
  const path = journalPaths(dataDir).db;
  if (!existsSync(path)) return;
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        'SELECT t.task_id, a.fence, a.state, a.lease_expires_at_ms FROM agent_task_attempts a JOIN agent_tasks t ON t.seq = a.task_seq ORDER BY t.task_id, a.fence',
      )
      .all() as AttemptRow[];
    const byTask = new Map<string, AttemptRow[]>();
    for (const row of rows) byTask.set(row.task_id, [...(byTask.get(row.task_id) ?? []), row]);
    for (const [taskId, attempts] of byTask) {
      const live = attempts.filter((a) => a.state === 'active' && nowMs < a.lease_expires_at_ms);
      assert.ok(live.length <= 1, `task ${taskId} has ${live.length} live attempts`);
      assert.ok(
        attempts.filter((a) => a.state !== 'replaced').length <= 1,
        `task ${taskId} has more than one attempt that is not replaced`,
      );
      const fences = attempts.map((a) => BigInt(a.fence));
      assert.equal(new Set(fences).size, fences.length, `task ${taskId} repeats a fence`);
      const top = fences[fences.length - 1] ?? 0n;
      const lastFence = BigInt(
        (db.prepare('SELECT last_fence FROM agent_tasks WHERE task_id = ?').get(taskId) as { last_fence: string })
          .last_fence,
      );
      assert.ok(lastFence >= top, `task ${taskId}: last_fence ${lastFence} below issued fence ${top}`);
      const seen = highest.get(taskId) ?? 0n;
      assert.ok(lastFence >= seen, `task ${taskId}: fence went backward from ${seen} to ${lastFence}`);
      highest.set(taskId, lastFence);
    }
  } finally {
    db.close();
  }
}

test('random interleavings of 2–8 actors never give two live attempts or a fence that goes backward', () => {
  let runs = 0;
  const succeeded = new Map<string, number>();
  fc.assert(
    fc.property(scenarioArb, ({ actors, steps }) => {
      runs += 1;
      const dir = mkdtempSync(join(tmpdir(), 'agentscm-prop-'));
      try {
        const store = makeTaskStore(dir);
        const clock = new FakeClock();
        const people: AgentRef[] = Array.from({ length: actors }, (_, i) => ({
          owner_id: `owner-${i % 3}`,
          agent_id: `agent-${i}`,
        }));
        const ctxs = people.map((actor) => context(store, actor, clock));
        const first = ctxs[0];
        if (first === undefined) throw new Error('no actor');
        const requirements = call(first, 'requirements');
        const tasks: TaskRef[] = [taskRef(requirements, 'lint'), taskRef(requirements, 'unit')];
        const known: { claimed: Claimed; holder: AgentRef }[] = [];
        const highest = new Map<string, bigint>();
        const issued = new Map<string, bigint>();
        let counter = 0;
        for (const step of steps) {
          counter += 1;
          if (step.op === 'advance') {
            clock.advance(step.ms);
            checkInvariants(dir, clock.ms, highest);
            continue;
          }
          const actor = people[step.actor] ?? people[0];
          const ctx = ctxs[step.actor] ?? first;
          if (actor === undefined) throw new Error('no actor');
          try {
            if (step.op === 'claim') {
              const task = tasks[step.task] ?? tasks[0];
              if (task === undefined) throw new Error('no task');
              const claimed = claimedOf(
                call(
                  ctx,
                  'claim',
                  claimRequest(actor, task, `r-${counter}`, `op-${counter}`, { leaseMs: BigInt(step.leaseMs) }),
                ),
              );
              // Every issued fence is strictly above every fence issued or reserved before for the task.
              const before = issued.get(task.task_id) ?? 0n;
              assert.ok(claimed.fence > before, `claim issued fence ${claimed.fence} after ${before}`);
              issued.set(task.task_id, claimed.fence);
              known.push({ claimed, holder: actor });
              succeeded.set('claim', (succeeded.get('claim') ?? 0) + 1);
            } else if (known.length > 0) {
              const target = known[step.target % known.length];
              if (target === undefined) throw new Error('no target');
              // Reconcile by anyone; the others as the holder half of the time, as a stranger otherwise.
              const sender =
                step.op === 'reconcile' || step.target % 2 === 0
                  ? step.op === 'reconcile'
                    ? actor
                    : target.holder
                  : actor;
              const sctx = ctxs[people.indexOf(sender)] ?? ctx;
              if (step.op === 'result')
                call(sctx, 'result', assertionRequest(sender, target.claimed, `r-${counter}`, 'failed'));
              else {
                const answer = call(sctx, step.op, mutationRequest(sender, target.claimed, step.op, `r-${counter}`));
                if (step.op === 'reconcile') {
                  const newFence = BigInt((answer.supersession as { new_fence: bigint | number }).new_fence);
                  assert.ok(
                    newFence > (issued.get(target.claimed.task_id) ?? 0n),
                    'a supersession fence went backward',
                  );
                  issued.set(target.claimed.task_id, newFence);
                }
              }
              succeeded.set(step.op, (succeeded.get(step.op) ?? 0) + 1);
            }
          } catch (error) {
            if (!isAgentscmError(error) || error.code === 'INTERNAL') throw error;
          }
          checkInvariants(dir, clock.ms, highest);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { numRuns: 25, seed: 20261129 },
  );
  assert.equal(runs, 25);
  // The interleavings really exercised the state machine: every kind succeeded somewhere.
  for (const op of ['claim', 'heartbeat', 'cancel', 'reconcile', 'result'])
    assert.ok((succeeded.get(op) ?? 0) > 0, `no ${op} succeeded`);
});
