/**
 * The import entry every upload path calls (`agent-task collect`, `upload`, `retry-upload` into
 * the local authority, and the hub's upload route). A command transfer goes straight to the
 * authority's import (src/tasks/collector-import.ts). A review transfer is replayed first (spec
 * "Operator-enrolled collector transfer": "For review it rebuilds immutable sources and the
 * installed request, then runs the existing finite controller against a validation-only replay
 * transport and journal"): `prepareReviewImport` checks the signature, the grant, the claim and
 * the profile's pins and reads the installed review; the controller runs over the exact
 * revision with the replay transport and an in-memory journal; only a byte-identical derived
 * record reaches the import, which binds the replay to the transfer's digest and stores the
 * derived outcome. Imported success flags alone never qualify.
 */
import { readTransferEnvelope, transferKindOf } from '../contracts/collector-transfer.js';
import { openAuthority } from '../native/store.js';
import type { CollectorImportOptions, CollectorImportView } from '../tasks/collector-import.js';
import { importCollectorTransfer, prepareReviewImport } from '../tasks/collector-import.js';
import type { GrantAuthorization } from '../tasks/grant-guard.js';
import { revisionReviewSources } from './review-controller.js';
import { replayReviewRecord } from './review-replay.js';

/** Import one signed transfer envelope of either kind (see the module comment). */
export async function importTransfer(dataDir: string, envelopeBytes: Uint8Array, grant: GrantAuthorization, options: CollectorImportOptions = {}): Promise<CollectorImportView> {
  const envelope = readTransferEnvelope(envelopeBytes);
  if (transferKindOf(envelope.header.records) !== 'review') return importCollectorTransfer(dataDir, envelopeBytes, grant, options);
  const inputs = prepareReviewImport(dataDir, envelopeBytes, grant, options);
  // An exact retry is answered from what the first import retained; nothing is replayed again.
  if (inputs === null) return importCollectorTransfer(dataDir, envelopeBytes, grant, options);
  const auth = openAuthority(dataDir, { mode: 'read' });
  let reviewId: string;
  let outcome: string;
  try {
    const derived = await replayReviewRecord({
      repository: inputs.repository,
      revision: inputs.revision,
      action: inputs.action,
      policyBytes: inputs.policyBytes,
      sources: revisionReviewSources(auth, inputs.repository, inputs.revision),
      requests: inputs.requests,
      record: inputs.record,
    });
    reviewId = derived.review_id;
    outcome = derived.outcome;
  } finally {
    auth.close();
  }
  return importCollectorTransfer(dataDir, envelopeBytes, grant, { ...options, replayed: { transfer_digest: inputs.transfer_digest, review_id: reviewId, outcome } });
}
