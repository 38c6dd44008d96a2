/**
 * Durable command attempts in the journal (docs/skill-workflows.md "Command steps at run time": the
 * runtime creates a deterministic durable command attempt; issue 4 "Execution"). An attempt is
 * reserved BEFORE any container exists, with its exact request; its container custody is noted
 * when the engine names the container; it is finished exactly once with its execution record.
 * A running attempt is never executed again: only `skill-workflow recover` finalizes it.
 * Over 400 lines: an attempt's whole life (reserve, custody, finish, recover) over its one table.
 */
import { AgentscmError } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { sha256Hex } from '../crypto/sha256.js';
import { immediate, readSnapshot, u64FromSql, u64ToSql, type SqliteDatabase } from '../native/sqlite.js';
import type { Store } from '../native/store-handle.js';
import { journalRead } from './journal.js';

export type CommandAttemptState = 'running' | 'succeeded' | 'failed' | 'uncertain';
export type CommandAttemptPhase = 'reserved' | 'container_created' | 'finished';

/** What the workflow status shows under a step's `execution` member. */
export interface CommandAttemptSummary {
  readonly attempt_id: string;
  readonly generation: bigint;
  readonly state: CommandAttemptState;
  readonly outcome: string | null;
  readonly record_digest: string | null;
}

export interface CommandAttempt extends CommandAttemptSummary {
  readonly run_id: string;
  readonly step_id: string;
  readonly phase: CommandAttemptPhase;
  readonly request_digest: string;
  readonly request_json: Buffer;
  readonly container_name: string;
  readonly container_id: string | null;
  readonly snapshot_path: string;
  readonly record_json: Buffer | null;
  readonly summary: string | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

interface AttemptRow {
  attempt_id: string;
  run_id: string;
  step_id: string;
  generation: string;
  state: CommandAttemptState;
  phase: CommandAttemptPhase;
  outcome: string | null;
  request_digest: string;
  request_json: Buffer;
  container_name: string;
  container_id: string | null;
  snapshot_path: string;
  record_json: Buffer | null;
  record_digest: string | null;
  summary: string | null;
  created_at_ms: number;
  updated_at_ms: number;
}

const WHAT = 'the workflow journal';
const COLUMNS =
  'attempt_id, run_id, step_id, generation, state, phase, outcome, request_digest, request_json, container_name, ' +
  'container_id, snapshot_path, record_json, record_digest, summary, created_at_ms, updated_at_ms';

function toAttempt(row: AttemptRow): CommandAttempt {
  return { ...row, generation: u64FromSql(row.generation) };
}

/**
 * The deterministic attempt ID of (repository, run, step, generation): "cmd-" and the SHA-256
 * of their canonical encoding, so a restart derives the same ID and finds the reserved row.
 * The repository ID (random per store) keeps two stores that reuse a run ID from sharing a
 * container name or custody labels on one engine.
 */
export function commandAttemptId(repository: string, runId: string, stepId: string, generation: bigint): string {
  return `cmd-${sha256Hex(encodeCanonical(['agentscm.command-attempt.v1', repository, runId, stepId, generation]))}`;
}

/** The engine-side container name of an attempt (custody is also carried by labels). */
export function commandContainerName(attemptId: string): string {
  return `agentscm-${attemptId}`;
}

export interface ReserveCommandAttemptInput {
  readonly repository: string;
  readonly runId: string;
  readonly stepId: string;
  readonly generation: bigint;
  readonly requestDigest: string;
  readonly requestJson: Uint8Array;
  readonly snapshotPath: string;
  readonly nowMs: number;
  /** Called inside the reservation transaction before a new attempt is inserted; a throw reserves nothing. */
  readonly recheck?: () => void;
}

/**
 * Reserve the attempt (issue 4: "reserved in the journal before any container exists").
 * Returns the existing row instead when (run, step, generation) is already reserved; a
 * different request under the same identity is COMMAND_ATTEMPT_CONFLICT.
 */
export function reserveCommandAttempt(
  db: SqliteDatabase,
  input: ReserveCommandAttemptInput,
): { attempt: CommandAttempt; created: boolean } {
  const attemptId = commandAttemptId(input.repository, input.runId, input.stepId, input.generation);
  return immediate(db, WHAT, () => {
    const existing = db.prepare(`SELECT ${COLUMNS} FROM command_attempts WHERE attempt_id = ?`).get(attemptId) as
      AttemptRow | undefined;
    if (existing !== undefined) {
      if (existing.request_digest !== input.requestDigest && existing.state === 'running') {
        throw new AgentscmError(
          'COMMAND_ATTEMPT_CONFLICT',
          `command attempt ${attemptId} was reserved for a different request`,
          {
            hint:
              `recover it first: agentscm skill-workflow recover ${input.runId} ${input.stepId} ` +
              '--docker PATH --docker-socket PATH',
          },
        );
      }
      return { attempt: toAttempt(existing), created: false };
    }
    input.recheck?.();
    db.prepare(
      `INSERT INTO command_attempts (attempt_id, run_id, step_id, generation, state, phase, request_digest,
         request_json, container_name, snapshot_path, created_at_ms, updated_at_ms)
       VALUES (?, ?, ?, ?, 'running', 'reserved', ?, ?, ?, ?, ?, ?)`,
    ).run(
      attemptId,
      input.runId,
      input.stepId,
      u64ToSql(input.generation),
      input.requestDigest,
      Buffer.from(input.requestJson),
      commandContainerName(attemptId),
      input.snapshotPath,
      input.nowMs,
      input.nowMs,
    );
    const row = db.prepare(`SELECT ${COLUMNS} FROM command_attempts WHERE attempt_id = ?`).get(attemptId) as AttemptRow;
    return { attempt: toAttempt(row), created: true };
  });
}

/** Note the container the engine created for a running attempt (custody for recovery). */
export function noteCommandContainer(db: SqliteDatabase, attemptId: string, containerId: string, nowMs: number): void {
  immediate(db, WHAT, () => {
    const result = db
      .prepare(
        `UPDATE command_attempts SET container_id = ?, phase = 'container_created', updated_at_ms = ?
         WHERE attempt_id = ? AND state = 'running'`,
      )
      .run(containerId, nowMs, attemptId);
    if (result.changes !== 1)
      throw new AgentscmError('COMMAND_ATTEMPT_CONFLICT', `command attempt ${attemptId} is no longer running`);
  });
}

export interface FinishCommandAttemptInput {
  readonly state: Exclude<CommandAttemptState, 'running'>;
  readonly outcome: string;
  readonly recordJson: Uint8Array;
  readonly recordDigest: string;
  readonly summary: string;
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
  /** A stream cut at the output bound: its last bytes (at most 16 KiB), kept beside the head. */
  readonly tails?: { readonly stdout?: Uint8Array; readonly stderr?: Uint8Array };
  readonly nowMs: number;
}

/**
 * Finish an attempt with an execution record. A running attempt gets its first record; an
 * uncertain one being reconciled (`allowUncertain`: recover, cancel) gets a further record that
 * names the previous one. Records are append-only (`command_attempt_records`): the attempt row
 * points at the newest, which the step follows, and no record or retained output is ever
 * rewritten. `previousRecordDigest`, when given, must still be the attempt's newest record
 * (a concurrent reconciliation is COMMAND_ATTEMPT_CONFLICT).
 */
export function finishCommandAttempt(
  db: SqliteDatabase,
  attemptId: string,
  input: FinishCommandAttemptInput,
  options: { allowUncertain?: boolean; previousRecordDigest?: string | null } = {},
): CommandAttempt {
  return immediate(db, WHAT, () => {
    const row = db.prepare(`SELECT ${COLUMNS} FROM command_attempts WHERE attempt_id = ?`).get(attemptId) as
      AttemptRow | undefined;
    if (row === undefined) throw notFound(attemptId);
    const open = row.state === 'running' || (options.allowUncertain === true && row.state === 'uncertain');
    if (!open) {
      throw new AgentscmError('COMMAND_ATTEMPT_CONFLICT', `command attempt ${attemptId} is already ${row.state}`, {
        hint: `inspect it: agentscm check-command-show ${attemptId}`,
      });
    }
    if (options.previousRecordDigest !== undefined && options.previousRecordDigest !== row.record_digest) {
      throw new AgentscmError(
        'COMMAND_ATTEMPT_CONFLICT',
        `command attempt ${attemptId} was reconciled meanwhile (its newest record is ${row.record_digest ?? 'none'})`,
        {
          hint: `inspect it: agentscm check-command-show ${attemptId}`,
        },
      );
    }
    const last = db
      .prepare('SELECT max(seq) AS seq FROM command_attempt_records WHERE attempt_id = ?')
      .get(attemptId) as { seq: number | null };
    db.prepare(
      `INSERT INTO command_attempt_records (attempt_id, seq, record_json, record_digest, previous_record_digest,
         state, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      attemptId,
      (last.seq ?? 0) + 1,
      Buffer.from(input.recordJson),
      input.recordDigest,
      row.record_digest,
      input.state,
      input.nowMs,
    );
    db.prepare(
      `UPDATE command_attempts SET state = ?, phase = 'finished', outcome = ?, record_json = ?, record_digest = ?,
         summary = ?, updated_at_ms = ? WHERE attempt_id = ?`,
    ).run(
      input.state,
      input.outcome,
      Buffer.from(input.recordJson),
      input.recordDigest,
      input.summary,
      input.nowMs,
      attemptId,
    );
    // The output observed first is the output: a reconciliation never replaces it.
    const put = db.prepare(
      'INSERT OR IGNORE INTO command_attempt_outputs (attempt_id, stream, bytes) VALUES (?, ?, ?)',
    );
    put.run(attemptId, 'stdout', Buffer.from(input.stdout));
    put.run(attemptId, 'stderr', Buffer.from(input.stderr));
    const putTail = db.prepare('INSERT OR IGNORE INTO command_attempt_output_tails VALUES (?, ?, ?)');
    for (const [stream, last] of Object.entries(input.tails ?? {}))
      putTail.run(attemptId, stream, Buffer.from(last.subarray(Math.max(0, last.length - 16_384))));
    return toAttempt(
      db.prepare(`SELECT ${COLUMNS} FROM command_attempts WHERE attempt_id = ?`).get(attemptId) as AttemptRow,
    );
  });
}

/** One retained execution record of an attempt (oldest first in listCommandAttemptRecords). */
export interface CommandAttemptRecordEntry {
  readonly seq: number;
  readonly record_digest: string;
  readonly previous_record_digest: string | null;
  readonly state: Exclude<CommandAttemptState, 'running'>;
  readonly created_at_ms: number;
}

/** Every record the attempt was finished or reconciled with, oldest first. */
export function listCommandAttemptRecords(db: SqliteDatabase, attemptId: string): CommandAttemptRecordEntry[] {
  return db
    .prepare(
      `SELECT seq, record_digest, previous_record_digest, state, created_at_ms FROM command_attempt_records
       WHERE attempt_id = ? ORDER BY seq`,
    )
    .all(attemptId) as CommandAttemptRecordEntry[];
}

function notFound(attemptId: string): AgentscmError {
  return new AgentscmError('COMMAND_ATTEMPT_NOT_FOUND', `no command attempt ${attemptId} in the journal`, {
    hint: "the attempt ID is shown under the step's execution member of `agentscm skill-workflow status RUN_ID --json`",
  });
}

/** One attempt with its record (COMMAND_ATTEMPT_NOT_FOUND otherwise). */
export function getCommandAttempt(db: SqliteDatabase, attemptId: string): CommandAttempt {
  const row = db.prepare(`SELECT ${COLUMNS} FROM command_attempts WHERE attempt_id = ?`).get(attemptId) as
    AttemptRow | undefined;
  if (row === undefined) throw notFound(attemptId);
  return toAttempt(row);
}

/** The retained stdout and stderr of a finished attempt (empty when none were kept). */
export function getCommandAttemptOutput(db: SqliteDatabase, attemptId: string): { stdout: Buffer; stderr: Buffer } {
  return readSnapshot(db, WHAT, () => {
    const rows = db
      .prepare('SELECT stream, bytes FROM command_attempt_outputs WHERE attempt_id = ?')
      .all(attemptId) as { stream: string; bytes: Buffer }[];
    const pick = (name: string): Buffer => rows.find((r) => r.stream === name)?.bytes ?? Buffer.alloc(0);
    return { stdout: pick('stdout'), stderr: pick('stderr') };
  });
}

/** The newest attempt of a step (highest generation), or null: what status and resume read. */
export function getCommandAttemptForStep(
  db: SqliteDatabase,
  runId: string,
  stepId: string,
): CommandAttemptSummary | null {
  const row = db
    .prepare(
      `SELECT attempt_id, generation, state, outcome, record_digest FROM command_attempts
       WHERE run_id = ? AND step_id = ? ORDER BY generation DESC LIMIT 1`,
    )
    .get(runId, stepId) as
    Pick<AttemptRow, 'attempt_id' | 'generation' | 'state' | 'outcome' | 'record_digest'> | undefined;
  if (row === undefined) return null;
  return {
    attempt_id: row.attempt_id,
    generation: u64FromSql(row.generation),
    state: row.state,
    outcome: row.outcome,
    record_digest: row.record_digest,
  };
}

/** The full newest attempt of a step, or null. */
export function findCommandAttemptForStep(db: SqliteDatabase, runId: string, stepId: string): CommandAttempt | null {
  const row = db
    .prepare(
      `SELECT ${COLUMNS} FROM command_attempts WHERE run_id = ? AND step_id = ? ORDER BY generation DESC LIMIT 1`,
    )
    .get(runId, stepId) as AttemptRow | undefined;
  return row === undefined ? null : toAttempt(row);
}

/** Attempts of a run that are still running (cancel needs runtime flags only when this is non-empty). */
export function listRunningCommandAttempts(db: SqliteDatabase, runId: string): CommandAttemptSummary[] {
  const rows = db
    .prepare(
      `SELECT attempt_id, generation, state, outcome, record_digest FROM command_attempts
       WHERE run_id = ? AND state = 'running' ORDER BY step_id, generation`,
    )
    .all(runId) as Pick<AttemptRow, 'attempt_id' | 'generation' | 'state' | 'outcome' | 'record_digest'>[];
  return rows.map((row) => ({
    attempt_id: row.attempt_id,
    generation: u64FromSql(row.generation),
    state: row.state,
    outcome: row.outcome,
    record_digest: row.record_digest,
  }));
}

/** `check-command-show`: one attempt with its request, record and retained output. */
export interface CommandAttemptView {
  readonly attempt_id: string;
  readonly run_id: string;
  readonly step_id: string;
  readonly generation: bigint;
  readonly state: CommandAttemptState;
  readonly phase: CommandAttemptPhase;
  readonly outcome: string | null;
  readonly summary: string | null;
  readonly request_digest: string;
  readonly record_digest: string | null;
  readonly container_name: string;
  readonly container_id: string | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
  readonly request: JsonValue;
  readonly record: JsonValue;
  /** Every record of the attempt, oldest first; the last is `record`. */
  readonly records: readonly CommandAttemptRecordEntry[];
  readonly stdout: { readonly text: string; readonly bytes: number; readonly sha256: string };
  readonly stderr: { readonly text: string; readonly bytes: number; readonly sha256: string };
}

const STORED_JSON_MAX = 4 * 1024 * 1024;

/** Read one attempt from the store's existing journal (it never creates the journal). */
export function showCommandAttempt(store: Store, attemptId: string): CommandAttemptView {
  validateId(attemptId, 'attempt ID');
  const journal = store.requireJournal();
  return journalRead(journal, () => {
    const attempt = getCommandAttempt(journal.db, attemptId);
    const output = getCommandAttemptOutput(journal.db, attemptId);
    const stream = (bytes: Buffer): CommandAttemptView['stdout'] => ({
      text: bytes.toString('utf8'),
      bytes: bytes.length,
      sha256: sha256Hex(bytes),
    });
    return {
      attempt_id: attempt.attempt_id,
      run_id: attempt.run_id,
      step_id: attempt.step_id,
      generation: attempt.generation,
      state: attempt.state,
      phase: attempt.phase,
      outcome: attempt.outcome,
      summary: attempt.summary,
      request_digest: attempt.request_digest,
      record_digest: attempt.record_digest,
      container_name: attempt.container_name,
      container_id: attempt.container_id,
      created_at_ms: attempt.created_at_ms,
      updated_at_ms: attempt.updated_at_ms,
      request: parseStrictJson(attempt.request_json, { maxBytes: STORED_JSON_MAX }),
      record: attempt.record_json === null ? null : parseStrictJson(attempt.record_json, { maxBytes: STORED_JSON_MAX }),
      records: listCommandAttemptRecords(journal.db, attemptId),
      stdout: stream(output.stdout),
      stderr: stream(output.stderr),
    };
  });
}
