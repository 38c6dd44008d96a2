/**
 * The journal lease (docs/skill-workflows.md "The lease and crash safety": two controllers on one
 * run — the loser gets "workflow journal is active", never a half-written step). One row per run
 * names its holder and an expiry; it is taken, renewed and checked inside BEGIN IMMEDIATE
 * transactions, and every step commit checks it again. A lease is stale once expired, or at once
 * when its holder was a process on this host that no longer exists (a SIGKILLed controller).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import { AgentscmError } from '../contracts/errors.js';
import { journalStatement, type Journal } from './journal.js';

/** How long a lease lasts without renewal; controllers renew it at every step and while a command runs. */
export const LEASE_TTL_MS = 60_000;

export interface LeaseHolder {
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
}

export interface LeaseRow {
  readonly run_id: string;
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
  readonly operation: string;
  readonly acquired_at_ms: number;
  readonly expires_at_ms: number;
}

/** A fresh holder identity for this process and call. */
export function newLeaseHolder(): LeaseHolder {
  const pid = process.pid;
  const host = hostname();
  return { holder: `${host}:${pid}:${randomBytes(8).toString('hex')}`, host, pid };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the lease still excludes other controllers. */
export function isLeaseLive(lease: LeaseRow, nowMs: number): boolean {
  if (lease.expires_at_ms <= nowMs) return false;
  if (lease.host === hostname() && lease.pid !== process.pid && !processExists(lease.pid)) return false;
  return true;
}

/** The run's lease row, or null. */
export function readRunLease(journal: Journal, runId: string): LeaseRow | null {
  return (
    (journalStatement(journal, 'SELECT * FROM workflow_leases WHERE run_id = ?').get(runId) as LeaseRow | undefined) ??
    null
  );
}

function activeError(runId: string, lease: LeaseRow): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_JOURNAL_ACTIVE',
    `workflow journal is active: run "${runId}" is held by another controller ` +
      `(${lease.operation}, pid ${lease.pid} on ${lease.host})`,
    {
      hint: 'retry after that operation finishes',
      details: { run_id: runId, operation: lease.operation, expires_at_ms: lease.expires_at_ms },
    },
  );
}

/**
 * Take the run's lease (caller's BEGIN IMMEDIATE transaction); a live lease of another holder is
 * WORKFLOW_JOURNAL_ACTIVE.
 */
export function acquireRunLease(
  journal: Journal,
  runId: string,
  holder: LeaseHolder,
  operation: string,
  nowMs: number,
): void {
  const current = readRunLease(journal, runId);
  if (current !== null && current.holder !== holder.holder && isLeaseLive(current, nowMs))
    throw activeError(runId, current);
  journalStatement(
    journal,
    `INSERT INTO workflow_leases (run_id, holder, host, pid, operation, acquired_at_ms, expires_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid,
       operation = excluded.operation, acquired_at_ms = excluded.acquired_at_ms,
       expires_at_ms = excluded.expires_at_ms`,
  ).run(runId, holder.holder, holder.host, holder.pid, operation, nowMs, nowMs + LEASE_TTL_MS);
}

/** Check that this holder still has the lease and extend it (caller's write transaction). */
export function renewRunLease(journal: Journal, runId: string, holder: LeaseHolder, nowMs: number): void {
  const current = readRunLease(journal, runId);
  if (current === null || current.holder !== holder.holder) {
    throw new AgentscmError(
      'WORKFLOW_JOURNAL_ACTIVE',
      `workflow journal is active: this controller lost the lease of run "${runId}" to another controller`,
      {
        hint: 'inspect the run with `skill-workflow status`; nothing of this step was recorded',
        details: { run_id: runId },
      },
    );
  }
  journalStatement(journal, 'UPDATE workflow_leases SET expires_at_ms = ? WHERE run_id = ? AND holder = ?').run(
    nowMs + LEASE_TTL_MS,
    runId,
    holder.holder,
  );
}

/** Give the lease back (caller's write transaction); a lease held by someone else is left alone. */
export function releaseRunLease(journal: Journal, runId: string, holder: LeaseHolder): void {
  journalStatement(journal, 'DELETE FROM workflow_leases WHERE run_id = ? AND holder = ?').run(runId, holder.holder);
}
