/**
 * The floor under the tasks benchmark (docs/agent-tasks.md "Benchmark"): what a claim →
 * heartbeat → result cycle costs when it runs nothing but SQLite statements, in the leanest
 * journal layout found, with no agentscm code at all — no request decoding, digests, canonical
 * encodings, rechecks or guard. If this floor is already near the target ratio, no
 * implementation that does the spec's work on every transition can reach it on the same disk.
 *
 * The layout (not agentscm's; a deliberately smaller one): a task row that carries its current
 * attempt state inline (a heartbeat and a result update one row instead of an attempt table and
 * its indexes), one append-only table for attempts, assertions and committed responses (a
 * transition's new rows share its last leaf), and request ids as a WITHOUT ROWID key table
 * (one b-tree instead of a row table and a unique index). Row sizes are those of the facade's
 * journal (task 1.9 KB, attempt 0.36 KB, assertion 0.6 KB, responses 0.35–0.65 KB). Each cycle
 * runs the statements a transition cannot do without: the exact-retry lookup, the writer
 * reservation on a second database with the subject recheck's two reads, the task lookup, the
 * bounded older-subject scan (claim), the writes, and the same durability as the facade (claim
 * synchronous=FULL, heartbeat and result NORMAL).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export interface FloorRunner {
  /** Run `cycles` cycles and return the milliseconds they took. */
  run(cycles: number): number;
  close(): void;
}

const SIZES = {
  task: 1902,
  attempt: 358,
  assertion: 604,
  claimResponse: 655,
  heartbeatResponse: 344,
  resultResponse: 494,
} as const;

/** The lean-layout floor in `dir` (two database files, as the facade's journal and authority). */
export function leanFloorRunner(dir: string): FloorRunner {
  const db = new Database(join(dir, 'floor-journal.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`
    CREATE TABLE tasks (seq INTEGER PRIMARY KEY, task_id TEXT NOT NULL UNIQUE, scope TEXT NOT NULL, digest TEXT NOT NULL, canonical BLOB NOT NULL,
      last_fence TEXT NOT NULL, attempt_state TEXT, lease_expires_at_ms INTEGER) STRICT;
    CREATE INDEX tasks_scope ON tasks (scope);
    CREATE TABLE records (seq INTEGER PRIMARY KEY, task_seq INTEGER NOT NULL, kind TEXT NOT NULL, digest TEXT NOT NULL, body BLOB NOT NULL) STRICT;
    CREATE TABLE requests (owner_id TEXT NOT NULL, agent_id TEXT NOT NULL, request_id TEXT NOT NULL, kind TEXT NOT NULL, request_digest TEXT NOT NULL,
      record_seq INTEGER NOT NULL, PRIMARY KEY (owner_id, agent_id, request_id)) STRICT, WITHOUT ROWID;
  `);
  const authority = new Database(join(dir, 'floor-authority.sqlite'));
  authority.pragma('journal_mode = WAL');
  authority.exec('CREATE TABLE facts (id INTEGER PRIMARY KEY, value TEXT NOT NULL) STRICT');

  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const reserve = authority.prepare('BEGIN IMMEDIATE');
  const release = authority.prepare('ROLLBACK');
  const dataVersion = authority.prepare('PRAGMA data_version');
  const totalChanges = authority.prepare('SELECT total_changes() AS changes');
  const findRequest = db.prepare(
    'SELECT q.kind, q.request_digest, r.body FROM requests q JOIN records r ON r.seq = q.record_seq WHERE q.owner_id = ? AND q.agent_id = ? AND q.request_id = ?',
  );
  const findTask = db.prepare(
    'SELECT seq, digest, canonical, last_fence, attempt_state, lease_expires_at_ms FROM tasks WHERE task_id = ?',
  );
  const olderUnresolved = db.prepare(
    `SELECT seq FROM tasks WHERE scope = ? AND attempt_state IN ('active', 'cancelled') LIMIT 1`,
  );
  const insertTask = db.prepare(
    `INSERT INTO tasks (task_id, scope, digest, canonical, last_fence, attempt_state, lease_expires_at_ms) VALUES (?, ?, ?, ?, '00000000000000000001', 'active', ?)`,
  );
  const insertRecord = db.prepare('INSERT INTO records (task_seq, kind, digest, body) VALUES (?, ?, ?, ?)');
  const insertRequest = db.prepare(
    'INSERT INTO requests (owner_id, agent_id, request_id, kind, request_digest, record_seq) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const renew = db.prepare(`UPDATE tasks SET lease_expires_at_ms = ? WHERE seq = ? AND attempt_state = 'active'`);
  const finish = db.prepare(`UPDATE tasks SET attempt_state = 'finished' WHERE seq = ? AND attempt_state = 'active'`);

  const bytes = (size: number, fill: number): Buffer => Buffer.alloc(size, fill);
  const task = bytes(SIZES.task, 1);
  const attempt = bytes(SIZES.attempt, 2);
  const assertion = bytes(SIZES.assertion, 3);
  const responses = {
    claim: bytes(SIZES.claimResponse, 4),
    heartbeat: bytes(SIZES.heartbeatResponse, 5),
    result: bytes(SIZES.resultResponse, 6),
  };
  // Task ids and digests are hashes in the facade's journal: their index entries land at random places.
  const digest = (n: number, salt: string): string => createHash('sha256').update(`${salt}:${n}`).digest('hex');

  // One transition: journal writer lock, authority reservation, exact-retry lookup, subject
  // recheck reads, then the body; commit the journal, release the reservation.
  const transition = (requestId: string, body: () => void): void => {
    begin.run();
    reserve.run();
    try {
      findRequest.get('alice', 'bench', requestId);
      dataVersion.get();
      totalChanges.get();
      body();
      commit.run();
    } finally {
      if (db.inTransaction) db.exec('ROLLBACK');
      release.run();
    }
  };
  let n = 0;
  let now = 1_700_000_000_000;
  return {
    run(cycles: number): number {
      const start = performance.now();
      for (let i = 0; i < cycles; i++) {
        n += 1;
        now += 2;
        const taskId = `t-${digest(n, 't').slice(0, 40)}`;
        const scope = `scope-${n % 32}`;
        // claim: the retry lookup and the derivation's memo check run before the transaction.
        findRequest.get('alice', 'bench', `c-${n}`);
        authority.exec('BEGIN DEFERRED');
        dataVersion.get();
        totalChanges.get();
        authority.exec('COMMIT');
        let seq = 0;
        transition(`c-${n}`, () => {
          findTask.get(taskId);
          olderUnresolved.get(scope);
          seq = Number(insertTask.run(taskId, scope, digest(n, 'd'), task, now + 60_000).lastInsertRowid);
          insertRecord.run(seq, 'attempt', digest(n, 'a'), attempt);
          const record = Number(insertRecord.run(seq, 'response', digest(n, 'r'), responses.claim).lastInsertRowid);
          insertRequest.run('alice', 'bench', `c-${n}`, 'claim', digest(n, 'c'), record);
        });
        db.exec('PRAGMA synchronous = NORMAL');
        transition(`h-${n}`, () => {
          findTask.get(taskId);
          renew.run(now + 60_001, seq);
          const record = Number(insertRecord.run(seq, 'response', digest(n, 'h'), responses.heartbeat).lastInsertRowid);
          insertRequest.run('alice', 'bench', `h-${n}`, 'heartbeat', digest(n, 'e'), record);
        });
        transition(`r-${n}`, () => {
          findTask.get(taskId);
          insertRecord.run(seq, 'assertion', digest(n, 's'), assertion);
          finish.run(seq);
          const record = Number(insertRecord.run(seq, 'response', digest(n, 'o'), responses.result).lastInsertRowid);
          insertRequest.run('alice', 'bench', `r-${n}`, 'result', digest(n, 'u'), record);
        });
        db.exec('PRAGMA synchronous = FULL');
      }
      return performance.now() - start;
    },
    close(): void {
      db.close();
      authority.close();
    },
  };
}
