/**
 * The workflow journal D/skill-workflows/state.sqlite (docs/architecture.md "Storage"): the run,
 * step and lease tables and their statement helpers. The file itself is opened by
 * src/native/journal-db.ts; readers open an existing file only, read-only, without migration,
 * and never create it.
 */
import { AgentscmError } from '../contracts/errors.js';
import { JOURNAL_WHAT, journalPaths, type Journal, type JournalMode, type JournalPaths } from '../native/journal-db.js';
import {
  cachedStatement,
  immediate,
  readSnapshot,
  u64FromSql,
  u64ToSql,
  type SqliteDatabase,
  type Statement,
} from '../native/sqlite.js';

export { JOURNAL_WHAT, journalPaths, type Journal, type JournalMode, type JournalPaths };

/** A statement prepared once per journal connection. */
export function journalStatement(journal: Journal, sql: string): Statement {
  return cachedStatement(journal.db, sql);
}

/**
 * How a journal write transaction reaches the disk (docs/skill-workflows.md "Durability").
 * 'durable': synchronous=FULL, the WAL is fsynced at commit — for every transaction that
 * precedes or records external work (run creation, lease, command attempts, command results,
 * cancel). 'crash-safe': synchronous=NORMAL, no fsync at commit — survives a process crash or
 * SIGKILL; only a power loss may roll back the newest such commits (never corrupting, and never
 * past a later durable commit, which fsyncs the WAL prefix before it). Only for records of pure
 * reads of immutable data, whose loss merely repeats the read.
 */
export type JournalDurability = 'durable' | 'crash-safe';

// The durability of the outermost open write transaction per connection (nested writes are
// savepoints of it and cannot change how it commits).
const openWriteDurability = new WeakMap<SqliteDatabase, JournalDurability>();

/**
 * BEGIN IMMEDIATE on the journal; contention is STORE_BUSY (exit 3). The connection runs at
 * synchronous=FULL outside 'crash-safe' transactions, so every other writer of this connection
 * (command attempts) stays durable. A 'durable' write nested in a 'crash-safe' one is refused.
 */
export function journalWrite<T>(journal: Journal, fn: () => T, durability: JournalDurability = 'durable'): T {
  if (journal.mode !== 'write')
    throw new AgentscmError('INTERNAL', 'a journal write needs a journal opened for writing');
  const db = journal.db;
  if (db.inTransaction) {
    if (durability === 'durable' && openWriteDurability.get(db) === 'crash-safe') {
      throw new AgentscmError('INTERNAL', 'a durable journal write cannot nest in a crash-safe one');
    }
    return immediate(db, JOURNAL_WHAT, fn);
  }
  // SQLite refuses to change the safety level inside a transaction: set it before BEGIN,
  // and put FULL back after COMMIT or ROLLBACK. exec, not a cached statement: the pragma takes
  // effect when it is compiled, so a prepared one would not apply it again.
  if (durability === 'crash-safe') db.exec('PRAGMA synchronous = NORMAL');
  openWriteDurability.set(db, durability);
  try {
    return immediate(db, JOURNAL_WHAT, fn);
  } finally {
    openWriteDurability.delete(db);
    if (durability === 'crash-safe') db.exec('PRAGMA synchronous = FULL');
  }
}

/** One read snapshot of the journal. */
export function journalRead<T>(journal: Journal, fn: () => T): T {
  if (journal.db.inTransaction) return fn();
  return readSnapshot(journal.db, JOURNAL_WHAT, fn);
}

export type RunState = 'running' | 'completed' | 'completed_with_omissions' | 'failed' | 'blocked' | 'cancelled';
export type StepState = 'pending' | 'running' | 'succeeded' | 'failed' | 'unavailable' | 'uncertain' | 'skipped';
export type StepKind = 'source_paths' | 'command' | 'require_capability' | 'review';

export const TERMINAL_RUN_STATES: readonly RunState[] = [
  'completed',
  'completed_with_omissions',
  'failed',
  'blocked',
  'cancelled',
];

export function isTerminalRunState(state: RunState): boolean {
  return TERMINAL_RUN_STATES.includes(state);
}

export interface RunRecord {
  readonly run_id: string;
  readonly name: string;
  readonly plan_digest: string;
  readonly skill_digest: string;
  readonly definition: Buffer;
  readonly definition_sha256: string;
  readonly repository: string;
  readonly revision: string;
  readonly policy_epoch: bigint;
  readonly step_count: number;
  readonly state: RunState;
  readonly state_reason: string | null;
  /** Set when continuation stopped because the binding changed: the run stays blocked with it. */
  readonly halted_reason: string | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

export interface StepRecord {
  readonly run_id: string;
  readonly position: number;
  readonly step_id: string;
  readonly kind: StepKind;
  readonly required: boolean;
  readonly state: StepState;
  /** Canonical JSON bytes of the step result, or null while nothing is recorded. */
  readonly result: Buffer | null;
  readonly result_sha256: string | null;
  readonly started_at_ms: number | null;
  readonly finished_at_ms: number | null;
}

interface RunRow extends Omit<RunRecord, 'policy_epoch'> {
  readonly policy_epoch: string;
}

interface StepRow extends Omit<StepRecord, 'required'> {
  readonly required: number;
}

/** The run, or null. */
export function findRun(journal: Journal, runId: string): RunRecord | null {
  const row = journalStatement(journal, 'SELECT * FROM workflow_runs WHERE run_id = ?').get(runId) as
    RunRow | undefined;
  return row === undefined ? null : { ...row, policy_epoch: u64FromSql(row.policy_epoch) };
}

/** The run (WORKFLOW_RUN_NOT_FOUND otherwise). */
export function getRun(journal: Journal, runId: string): RunRecord {
  const run = findRun(journal, runId);
  if (run === null) {
    throw new AgentscmError('WORKFLOW_RUN_NOT_FOUND', `no workflow run "${runId}" in ${JOURNAL_WHAT}`, {
      hint: 'start it with `agentscm skill-workflow run RUN_ID FILE`, or check the run id and --data-dir',
    });
  }
  return run;
}

/** What a step commit rereads of its run: state and definition digest, without the definition bytes. */
export interface RunHeader {
  readonly state: RunState;
  readonly state_reason: string | null;
  readonly halted_reason: string | null;
  readonly definition_sha256: string;
}

/** The run's header (WORKFLOW_RUN_NOT_FOUND otherwise). */
export function getRunHeader(journal: Journal, runId: string): RunHeader {
  const row = journalStatement(
    journal,
    'SELECT state, state_reason, halted_reason, definition_sha256 FROM workflow_runs WHERE run_id = ?',
  ).get(runId) as RunHeader | undefined;
  return row ?? getRun(journal, runId);
}

/** Every step of the run in execution order. */
export function listSteps(journal: Journal, runId: string): StepRecord[] {
  const rows = journalStatement(journal, 'SELECT * FROM workflow_steps WHERE run_id = ? ORDER BY position').all(
    runId,
  ) as StepRow[];
  return rows.map((row) => ({ ...row, required: row.required === 1 }));
}

/** Step states only (no results): what the run state is derived from after each commit. */
export function listStepStates(
  journal: Journal,
  runId: string,
): { step_id: string; required: boolean; state: StepState }[] {
  const rows = journalStatement(
    journal,
    'SELECT step_id, required, state FROM workflow_steps WHERE run_id = ? ORDER BY position',
  ).all(runId) as {
    step_id: string;
    required: number;
    state: StepState;
  }[];
  return rows.map((row) => ({ step_id: row.step_id, required: row.required === 1, state: row.state }));
}

export interface NewRun {
  readonly run_id: string;
  readonly name: string;
  readonly plan_digest: string;
  readonly skill_digest: string;
  readonly definition: Uint8Array;
  readonly definition_sha256: string;
  readonly repository: string;
  readonly revision: string;
  readonly policy_epoch: bigint;
  readonly steps: readonly { readonly step_id: string; readonly kind: StepKind; readonly required: boolean }[];
  readonly now_ms: number;
}

/** Insert a run and its pending steps (caller's write transaction). */
export function insertRun(journal: Journal, run: NewRun): void {
  journalStatement(
    journal,
    `INSERT INTO workflow_runs (run_id, name, plan_digest, skill_digest, definition, definition_sha256, repository,
       revision, policy_epoch, step_count, state, state_reason, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', NULL, ?, ?)`,
  ).run(
    run.run_id,
    run.name,
    run.plan_digest,
    run.skill_digest,
    run.definition,
    run.definition_sha256,
    run.repository,
    run.revision,
    u64ToSql(run.policy_epoch),
    run.steps.length,
    run.now_ms,
    run.now_ms,
  );
  const insertStep = journalStatement(
    journal,
    `INSERT INTO workflow_steps (run_id, position, step_id, kind, required, state) VALUES (?, ?, ?, ?, ?, 'pending')`,
  );
  run.steps.forEach((step, position) =>
    insertStep.run(run.run_id, position, step.step_id, step.kind, step.required ? 1 : 0),
  );
}

/** Set the run state (caller's write transaction). */
export function updateRunState(
  journal: Journal,
  runId: string,
  state: RunState,
  reason: string | null,
  nowMs: number,
): void {
  journalStatement(
    journal,
    'UPDATE workflow_runs SET state = ?, state_reason = ?, updated_at_ms = ? WHERE run_id = ?',
  ).run(state, reason, nowMs, runId);
}

/**
 * Halt a running run whose binding changed (caller's write transaction): it becomes `blocked`
 * with `reason`, and stays blocked whatever its steps later record. False when it was no longer running.
 */
export function haltRun(journal: Journal, runId: string, reason: string, nowMs: number): boolean {
  return (
    journalStatement(
      journal,
      `UPDATE workflow_runs SET state = 'blocked', state_reason = ?, halted_reason = ?, updated_at_ms = ?
       WHERE run_id = ? AND state = 'running'`,
    ).run(reason, reason, nowMs, runId).changes === 1
  );
}

/**
 * Put a running step back to pending (caller's write transaction): only for a command step
 * whose runtime refused it before any attempt was reserved, so nothing of it ever ran.
 */
export function markStepPendingAgain(journal: Journal, runId: string, stepId: string): boolean {
  return (
    journalStatement(
      journal,
      `UPDATE workflow_steps SET state = 'pending', started_at_ms = NULL
       WHERE run_id = ? AND step_id = ? AND state = 'running'
         AND NOT EXISTS (SELECT 1 FROM command_attempts WHERE run_id = ? AND step_id = ?)`,
    ).run(runId, stepId, runId, stepId).changes === 1
  );
}

/** Mark a pending step running (a command step about to be handed to the runtime). */
export function markStepRunning(journal: Journal, runId: string, stepId: string, nowMs: number): void {
  const changed = journalStatement(
    journal,
    `UPDATE workflow_steps SET state = 'running', started_at_ms = ?
     WHERE run_id = ? AND step_id = ? AND state = 'pending'`,
  ).run(nowMs, runId, stepId).changes;
  if (changed !== 1)
    throw new AgentscmError('WORKFLOW_JOURNAL_INCONSISTENT', `step "${stepId}" of run "${runId}" is no longer pending`);
}

/** Record a step's final state and canonical result (caller's write transaction). */
export function recordStepResult(
  journal: Journal,
  runId: string,
  stepId: string,
  from: readonly StepState[],
  state: StepState,
  result: Uint8Array,
  resultSha256: string,
  startedAtMs: number,
  nowMs: number,
): void {
  const placeholders = from.map(() => '?').join(', ');
  const changed = journalStatement(
    journal,
    `UPDATE workflow_steps SET state = ?, result = ?, result_sha256 = ?, started_at_ms = coalesce(started_at_ms, ?),
       finished_at_ms = ?
     WHERE run_id = ? AND step_id = ? AND state IN (${placeholders})`,
  ).run(state, result, resultSha256, startedAtMs, nowMs, runId, stepId, ...from).changes;
  if (changed !== 1)
    throw new AgentscmError(
      'WORKFLOW_JOURNAL_INCONSISTENT',
      `step "${stepId}" of run "${runId}" changed while its result was being recorded`,
    );
}
