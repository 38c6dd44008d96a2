/**
 * The agent-task rows of the workflow journal (docs/agent-tasks.md): the retained task rows, and
 * the conventions every agent-task row module follows (src/tasks/attempt-rows.ts,
 * assertion-rows.ts, request-rows.ts). Every row keeps its exact canonical bytes; reading a row
 * decodes them strictly and checks them against the stored digest (TASK_JOURNAL_INCONSISTENT
 * otherwise), so status and retries return integrity-checked data.
 */
import { AgentscmError } from '../contracts/errors.js';
import { encodeTask, taskDigest, workflowTaskDecoder, type WorkflowTask } from '../contracts/task/task.js';
import { u64FromSql, u64ToSql } from '../native/sqlite.js';
import { journalStatement, type Journal } from '../workflows/journal.js';

/** A retained task scan never reads more than this many identities (docs/agent-tasks.md). */
export const MAX_SCOPE_SCAN = 4096;

export interface RetainedTask {
  readonly task: WorkflowTask;
  readonly digest: string;
  readonly last_fence: bigint;
  readonly seq: number;
}

export function inconsistent(what: string): never {
  throw new AgentscmError('TASK_JOURNAL_INCONSISTENT', `${what} does not match its retained digest`, {
    hint: 'the journal was changed outside agentscm; inspect it before continuing',
  });
}

export interface TaskRow {
  seq: number;
  task_id: string;
  task_digest: string;
  canonical: Buffer;
  last_fence: string;
}

/**
 * Decoded retained rows by their exact canonical bytes: a row whose bytes equal a cached entry
 * decodes to the same checked value, so the strict decode and digest run once per distinct row.
 */
export const DECODED_LIMIT = 256;
const decodedTasks = new Map<
  string,
  { readonly bytes: Buffer; readonly task: WorkflowTask; readonly digest: string }
>();

export function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > DECODED_LIMIT) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
}

export function taskOf(row: TaskRow): RetainedTask {
  const cached = decodedTasks.get(row.task_id);
  let task: WorkflowTask;
  let digest: string;
  if (cached !== undefined && cached.bytes.equals(row.canonical)) {
    ({ task, digest } = cached);
  } else {
    task = workflowTaskDecoder.decode(row.canonical);
    digest = taskDigest(task);
    remember(decodedTasks, row.task_id, { bytes: Buffer.from(row.canonical), task, digest });
  }
  if (digest !== row.task_digest || task.task_id !== row.task_id) inconsistent(`retained task ${row.task_id}`);
  return { task, digest, last_fence: u64FromSql(row.last_fence), seq: row.seq };
}

/** The retained task, or null. */
export function findRetainedTask(journal: Journal, taskId: string): RetainedTask | null {
  const row = journalStatement(
    journal,
    'SELECT seq, task_id, task_digest, canonical, last_fence FROM agent_tasks WHERE task_id = ?',
  ).get(taskId) as TaskRow | undefined;
  return row === undefined ? null : taskOf(row);
}

/**
 * The retained task of a derived task identity, or null when it is not retained; a retained row
 * with another digest under the same id is TASK_JOURNAL_INCONSISTENT (derivation is
 * deterministic, so only a change outside agentscm can cause it).
 */
export function findRetainedDerivedTask(journal: Journal, taskId: string, digest: string): RetainedTask | null {
  const retained = findRetainedTask(journal, taskId);
  if (retained !== null && retained.digest !== digest) inconsistent(`retained task ${taskId}`);
  return retained;
}

/**
 * Retain a derived task that the journal does not hold yet (write transaction), with
 * `lastFence` as its highest issued fence; its seq is the rowid SQLite assigns (one above the
 * newest). `canonical` is the task's canonical encoding when the caller already holds it (a
 * derivation encodes each task once to digest it).
 */
export function insertTask(
  journal: Journal,
  task: WorkflowTask,
  digest: string,
  lastFence: bigint,
  nowMs: number,
  canonicalBytes?: Buffer,
): RetainedTask {
  const canonical = canonicalBytes ?? encodeTask(task).canonical;
  // The next transition reads this row back: remember its decoding now (keyed by the exact
  // bytes, so a rolled-back insert leaves only a correct decoding of bytes never read).
  remember(decodedTasks, task.task_id, { bytes: canonical, task, digest });
  const { lastInsertRowid } = journalStatement(
    journal,
    `INSERT INTO agent_tasks (task_id, task_digest, repository, change_id, profile, step_id, canonical,
      last_fence, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    task.task_id,
    digest,
    task.subject.repository,
    task.subject.change_id,
    task.subject.profile,
    task.subject.step_id,
    canonical,
    u64ToSql(lastFence),
    nowMs,
  );
  return { task, digest, last_fence: lastFence, seq: Number(lastInsertRowid) };
}

/** Raise a task's highest issued fence (write transaction). */
export function setLastFence(journal: Journal, task: RetainedTask, fence: bigint): void {
  journalStatement(journal, 'UPDATE agent_tasks SET last_fence = ? WHERE seq = ? AND last_fence < ?').run(
    u64ToSql(fence),
    task.seq,
    u64ToSql(fence),
  );
}

/**
 * The bounded older-subject rule (docs/agent-tasks.md "State machine": at most MAX_SCOPE_SCAN
 * older subjects) over the other retained identities of the same repository, Change, profile and
 * step (`exceptSeq` is the task's own seq when it is retained): the newest of the newest
 * MAX_SCOPE_SCAN whose attempt is unresolved (active or cancelled), or null.
 *
 * Its cost does not grow with the scope's history (docs/agent-tasks.md "Journal growth"): the
 * newest unresolved task of the scope is one lookup in `agent_task_unresolved` (journal step 9,
 * kept by triggers), and it is within the bound when fewer than MAX_SCOPE_SCAN other identities
 * of the scope are newer — counted only up to the bound, from it to the newest, which is a
 * handful of rows unless an old attempt was left unresolved. When the newest unresolved task is
 * beyond the bound, every older one is too. The bound is written into the SQL: a LIMIT or OFFSET
 * bound as a parameter makes SQLite run these queries several times slower.
 */
export function olderUnresolvedTaskId(journal: Journal, task: WorkflowTask, exceptSeq: number | null): string | null {
  const s = task.subject;
  const except = exceptSeq ?? -1;
  const row = journalStatement(
    journal,
    `SELECT (SELECT task_id FROM agent_tasks WHERE seq = u.task_seq) AS task_id,
       (SELECT count(*) FROM (
          SELECT 1 FROM agent_tasks
          WHERE repository = u.repository AND change_id = u.change_id AND profile = u.profile
            AND step_id = u.step_id AND seq > u.task_seq AND seq <> ?
          LIMIT ${MAX_SCOPE_SCAN}
        )) AS newer
     FROM agent_task_unresolved u
     WHERE u.repository = ? AND u.change_id = ? AND u.profile = ? AND u.step_id = ? AND u.task_seq <> ?
     ORDER BY u.task_seq DESC LIMIT 1`,
  ).get(except, s.repository, s.change_id, s.profile, s.step_id, except) as
    { task_id: string | null; newer: number } | undefined;
  return row === undefined || row.newer >= MAX_SCOPE_SCAN ? null : row.task_id;
}

/**
 * The check before a fresh claim: `exceeded` when more than MAX_SCOPE_SCAN other identities
 * share the task's scope (counted up to the bound, an index-only scan), and the older unresolved
 * task of olderUnresolvedTaskId.
 */
export function olderUnresolvedTask(
  journal: Journal,
  task: WorkflowTask,
  exceptSeq: number | null,
): { readonly exceeded: boolean; readonly task_id: string | null } {
  const s = task.subject;
  const row = journalStatement(
    journal,
    `SELECT EXISTS (
         SELECT 1 FROM agent_tasks
         WHERE repository = ? AND change_id = ? AND profile = ? AND step_id = ? AND seq <> ?
         LIMIT 1 OFFSET ${MAX_SCOPE_SCAN}
       ) AS exceeded`,
  ).get(s.repository, s.change_id, s.profile, s.step_id, exceptSeq ?? -1) as { exceeded: number };
  return { exceeded: row.exceeded === 1, task_id: olderUnresolvedTaskId(journal, task, exceptSeq) };
}

/** The seq of a retained task (its index entry only, the row is not read), or null. */
export function retainedSeqOf(journal: Journal, taskId: string): number | null {
  const row = journalStatement(journal, 'SELECT seq FROM agent_tasks WHERE task_id = ?').get(taskId) as
    { seq: number } | undefined;
  return row === undefined ? null : row.seq;
}

/**
 * One page of retained tasks of a repository (optionally one Change), in retention order after `afterSeq`
 * (docs/dashboard.md).
 */
export function listRetainedTasks(
  journal: Journal,
  query: {
    readonly repository: string;
    readonly change: string | null;
    readonly afterSeq: number;
    readonly limit: number;
  },
): RetainedTask[] {
  const rows = (
    query.change === null
      ? journalStatement(
          journal,
          'SELECT seq, task_id, task_digest, canonical, last_fence FROM agent_tasks ' +
            'WHERE repository = ? AND seq > ? ORDER BY seq LIMIT ?',
        ).all(query.repository, query.afterSeq, query.limit)
      : journalStatement(
          journal,
          'SELECT seq, task_id, task_digest, canonical, last_fence FROM agent_tasks ' +
            'WHERE repository = ? AND change_id = ? AND seq > ? ORDER BY seq LIMIT ?',
        ).all(query.repository, query.change, query.afterSeq, query.limit)
  ) as TaskRow[];
  return rows.map(taskOf);
}
