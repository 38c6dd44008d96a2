/**
 * The envelope bytes of an imported transfer (`collector_transfers`, authority step 011), read one at a
 * time and checked against the row that names them. Views, receipts and receipt bundles read
 * envelopes through this module, which depends on no task operation.
 */
import { TRANSFER_LIMITS } from '../../contracts/collector/transfer.js';
import { AgentscmError } from '../../contracts/errors.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { prepared, type Authority } from '../../native/store.js';
import type { RetainedTransferRow } from './transfers.js';

/**
 * Read a retained envelope one at a time: its stored length is checked against 16 MiB before
 * its bytes are read, and the bytes must still have the stored SHA-256.
 */
export function readRetainedEnvelope(auth: Authority, row: RetainedTransferRow): Buffer {
  if (row.length > TRANSFER_LIMITS.maxEnvelopeBytes) {
    throw new AgentscmError(
      'TASK_JOURNAL_INCONSISTENT',
      `the retained transfer ${row.upload_request_id} claims ${row.length} bytes, more than 16 MiB; it was not read`,
    );
  }
  const found = prepared(
    auth,
    'SELECT envelope FROM collector_transfers WHERE upload_request_id = ? AND length(envelope) = ?',
  ).get(row.upload_request_id, row.length) as { envelope: Buffer } | undefined;
  if (found === undefined || sha256Hex(found.envelope) !== row.transfer_digest) {
    throw new AgentscmError(
      'TASK_JOURNAL_INCONSISTENT',
      `the retained transfer ${row.upload_request_id} does not have its stored length and digest`,
    );
  }
  return found.envelope;
}
