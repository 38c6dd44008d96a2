/**
 * The import entry every upload path calls (`agent-task collect`, `upload`, `retry-upload` into
 * the local authority, and the hub's upload route). A command transfer goes straight to the
 * authority's import (src/tasks/collector/import.ts). A review transfer is replayed first (spec
 * "Operator-enrolled collector transfer": "For review it rebuilds immutable sources and the
 * installed request, then runs the existing finite controller against a validation-only replay
 * transport and journal"): `readUploadedTransfer` reads the envelope and checks its signature
 * once for either kind; `prepareReviewImport` checks the grant, the claim and the profile's pins
 * and reads the installed review; the controller runs over the exact
 * revision with the replay transport and an in-memory journal; only a byte-identical derived
 * record reaches the import, which binds the replay to the transfer's digest and stores the
 * derived outcome. Imported success flags alone never qualify.
 */
import type { Store } from '../../native/store-handle.js';
import { importReviewTransfer, prepareReviewImport } from '../../tasks/collector/import-review.js';
import {
  importCollectorTransfer,
  readUploadedTransfer,
  type CollectorImportOptions,
  type CollectorImportView,
} from '../../tasks/collector/import.js';
import type { GrantAuthorization } from '../../tasks/grant-guard.js';
import { replayReviewRecord } from './replay.js';
import { revisionReviewSources } from './sources.js';

/**
 * Import one signed transfer envelope of either kind (see the module comment). The envelope is
 * read and its signature verified once (readUploadedTransfer); both kinds import that value.
 */
export async function importTransfer(
  store: Store,
  envelopeBytes: Uint8Array,
  grant: GrantAuthorization,
  options: CollectorImportOptions = {},
): Promise<CollectorImportView> {
  const transfer = readUploadedTransfer(store, envelopeBytes, grant, options);
  if (transfer.kind !== 'review') return importCollectorTransfer(store, transfer, grant, options);
  const start = prepareReviewImport(store, transfer, grant, options);
  // An exact retry is answered from what the first import retained; nothing is replayed again.
  if (start.retained !== undefined) return start.retained;
  const { inputs } = start.prepared;
  const derived = await replayReviewRecord({
    repository: inputs.repository,
    revision: inputs.revision,
    action: inputs.action,
    policyBytes: inputs.policyBytes,
    sources: revisionReviewSources(store.authority(), inputs.repository, inputs.revision),
    requests: inputs.requests,
    record: inputs.record,
  });
  return importReviewTransfer(
    store,
    start.prepared,
    { transfer_digest: inputs.transfer_digest, review_id: derived.review_id, outcome: derived.outcome },
    grant,
    options,
  );
}
