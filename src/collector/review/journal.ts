/**
 * The review journal (docs/review.md "The journal": the collector durably reserves review calls
 * before external effects, and reopening retained state does not rerun a model call). One small
 * SQLite database of its own, S/review/journal.sqlite inside the collector state directory
 * (owner-private), with one row per model call: the canonical request bytes, their digest and the
 * ticket are committed (synchronous FULL) before the call is made; the transport's observation is
 * attached to that row afterwards. A row without an observation is a call that may have reached the
 * model: it is never made again. Import and replay use a validation-only journal in memory with the
 * same rules.
 */
import { join } from 'node:path';

import { AgentscmError } from '../../contracts/errors.js';
import {
  cachedStatement,
  immediate,
  mapSqliteError,
  openWritable,
  type Migration,
  type SqliteDatabase,
} from '../../native/sqlite.js';
import { ensurePrivateDir } from '../snapshot.js';

const WHAT = 'review journal';

// One step: the journal is small and new; later steps append here.
const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`CREATE TABLE review_calls (
      review_id TEXT NOT NULL CHECK (length(review_id) = 64),
      call_index INTEGER NOT NULL CHECK (call_index >= 0),
      request_digest TEXT NOT NULL CHECK (length(request_digest) = 64),
      ticket TEXT NOT NULL CHECK (length(ticket) = 64),
      request BLOB NOT NULL,
      observation BLOB,
      PRIMARY KEY (review_id, call_index)
    ) WITHOUT ROWID`);
  },
];

export interface ReviewJournal {
  readonly db: SqliteDatabase;
  /** Where the journal lives, or ':memory:' for a validation-only journal. */
  readonly path: string;
  close(): void;
}

export interface JournalCall {
  readonly request_digest: string;
  readonly ticket: string;
  readonly request: Buffer;
  /** Canonical observation bytes, or null: reserved and never answered. */
  readonly observation: Buffer | null;
}

/** The journal file below a collector state directory. */
export function reviewJournalPath(stateDir: string): string {
  return join(ensurePrivateDir(join(ensurePrivateDir(stateDir), 'review')), 'journal.sqlite');
}

/** Open (creating when missing) the review journal of a collector state directory. */
export function openReviewJournal(stateDir: string): ReviewJournal {
  const path = reviewJournalPath(stateDir);
  const db = openWritable(path, MIGRATIONS, WHAT);
  return { db, path, close: () => db.close() };
}

/** A validation-only journal in memory (import replay): the same rows and rules, nothing kept. */
export function openValidationJournal(): ReviewJournal {
  const db = openWritable(':memory:', MIGRATIONS, `validation-only ${WHAT}`);
  return { db, path: ':memory:', close: () => db.close() };
}

interface CallRow {
  request_digest: string;
  ticket: string;
  request: Buffer;
  observation: Buffer | null;
}

/** The retained call of a review at an index, or null. */
export function getJournalCall(journal: ReviewJournal, reviewId: string, callIndex: number): JournalCall | null {
  try {
    const row = cachedStatement(
      journal.db,
      'SELECT request_digest, ticket, request, observation FROM review_calls WHERE review_id = ? AND call_index = ?',
    ).get(reviewId, callIndex) as CallRow | undefined;
    return row === undefined
      ? null
      : { request_digest: row.request_digest, ticket: row.ticket, request: row.request, observation: row.observation };
  } catch (error) {
    mapSqliteError(error, WHAT);
  }
}

function mismatch(reviewId: string, callIndex: number, why: string): AgentscmError {
  return new AgentscmError(
    'REVIEW_JOURNAL_MISMATCH',
    `the review journal retains call ${callIndex} of review ${reviewId.slice(0, 12)} with ${why}`,
    {
      hint:
        'a retained review is never called again with other inputs; review the changed sources, policy or ' +
        'transport as a new review (another revision or policy gives another review id)',
      details: { review_id: reviewId, call_index: callIndex },
    },
  );
}

/**
 * Reserve a call durably before it is made: commits the request bytes, digest and ticket.
 * Returns false when the same reservation already exists (the caller must then not call again);
 * another request or ticket at the same index is REVIEW_JOURNAL_MISMATCH.
 */
export function reserveJournalCall(
  journal: ReviewJournal,
  reviewId: string,
  callIndex: number,
  call: { requestDigest: string; ticket: string; request: Buffer },
): boolean {
  return immediate(journal.db, WHAT, () => {
    const existing = getJournalCall(journal, reviewId, callIndex);
    if (existing !== null) {
      if (
        existing.request_digest !== call.requestDigest ||
        existing.ticket !== call.ticket ||
        !existing.request.equals(call.request)
      ) {
        throw mismatch(reviewId, callIndex, 'another request');
      }
      return false;
    }
    cachedStatement(
      journal.db,
      'INSERT INTO review_calls (review_id, call_index, request_digest, ticket, request, observation) VALUES (?, ' +
        '?, ?, ?, ?, NULL)',
    ).run(reviewId, callIndex, call.requestDigest, call.ticket, call.request);
    return true;
  });
}

/** Attach the observation to its reservation (once; the ticket must match). */
export function recordJournalObservation(
  journal: ReviewJournal,
  reviewId: string,
  callIndex: number,
  ticket: string,
  observation: Buffer,
): void {
  immediate(journal.db, WHAT, () => {
    const existing = getJournalCall(journal, reviewId, callIndex);
    if (existing === null) throw new AgentscmError('INTERNAL', `call ${callIndex} was observed without a reservation`);
    if (existing.ticket !== ticket) throw mismatch(reviewId, callIndex, 'another ticket');
    if (existing.observation !== null) {
      if (existing.observation.equals(observation)) return;
      throw mismatch(reviewId, callIndex, 'another observation');
    }
    cachedStatement(
      journal.db,
      'UPDATE review_calls SET observation = ? WHERE review_id = ? AND call_index = ? AND observation IS NULL',
    ).run(observation, reviewId, callIndex);
  });
}

/** The retained request bytes of a review, in call order: the ReviewRequest records a transfer carries. */
export function listJournalRequests(journal: ReviewJournal, reviewId: string): Buffer[] {
  try {
    return (
      cachedStatement(journal.db, 'SELECT request FROM review_calls WHERE review_id = ? ORDER BY call_index').all(
        reviewId,
      ) as { request: Buffer }[]
    ).map((row) => row.request);
  } catch (error) {
    mapSqliteError(error, WHAT);
  }
}
