/**
 * Authority-side import of a collector transfer (spec "Operator-enrolled collector transfer";
 * WIRE.md "Collector transfer envelope v1"; docs/collector-transfer.md "Import"). One core
 * function that every upload path calls: `agent-task collect` and `agent-task upload` into the
 * local authority, and the hub's upload route.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { JsonObject } from '../contracts/json-value.js';
import type { TaskConnections } from './connections.js';
import type { GrantAuthorization } from './grant-guard.js';

export interface CollectorImportOptions {
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: (() => number) | undefined;
  /** Connections kept open by an in-process adapter; absent → the import opens its own. */
  readonly connections?: TaskConnections | undefined;
}

/**
 * The answer of an import (and of its exact retry), a JSON object:
 * `{status: "imported" | "retained", upload_request_id, transfer_digest, task_id, attempt_id,
 * fence, outcome, record_digest, receipt: {receipt_digest, state} | null,
 * currently_applicable, applicability: {...}}`. `retained` is the historical view of an
 * identical earlier upload; `currently_applicable` is read now and reported separately.
 */
export type CollectorImportView = JsonObject;

/**
 * Import one signed transfer envelope as the grant's actor into the authority of `dataDir`.
 *
 * Order: the envelope is read and its signature verified with the CURRENT registration's key
 * and audience = this authority before anything else; then, under the grant guard, an exact
 * retry (same upload_request_id, same bytes) answers the retained view and changed bytes under
 * the same upload request are COLLECTOR_UPLOAD_CONFLICT; then every header binding is checked
 * against the claimed attempt, the pinned ExecutionRequest is regenerated and compared, the
 * record is validated, and the transfer is stored with its original bytes in one journal
 * transaction under the native writer reservation (with the grant recheck). A receipt v2 is
 * written when the graph completes. Every refusal is an AgentscmError with a stable code
 * (docs/errors.md "collector import") and changes nothing.
 */
export function importCollectorTransfer(dataDir: string, envelopeBytes: Uint8Array, grant: GrantAuthorization, options: CollectorImportOptions = {}): CollectorImportView {
  void dataDir;
  void envelopeBytes;
  void grant;
  void options;
  throw new AgentscmError('INTERNAL', 'collector import is not available yet');
}
