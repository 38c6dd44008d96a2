/**
 * Commit an import's or a receipt's authority rows inside their transition (docs/collector-transfer.md
 * "Where transfers and receipts live"). The transition holds the journal's BEGIN IMMEDIATE and the
 * authority's writer reservation; the rows are written through the reserved authority connection and
 * committed here, last in the body, so that the authority commits BEFORE the journal. A crash between
 * the two leaves the transfer retained and its attempt still active in the journal: the exact retry
 * of that upload finds the transfer and finishes the attempt (import-retained.ts `settleRetained`).
 * The transition's release of the reservation then finds no open transaction and does nothing.
 */
import { cachedStatement, mapSqliteError } from '../../native/sqlite.js';
import type { TransitionScope } from '../transition.js';

export function commitAuthority(scope: TransitionScope): void {
  try {
    cachedStatement(scope.auth.db, 'COMMIT').run();
  } catch (error) {
    mapSqliteError(error, 'the native authority');
  }
}
