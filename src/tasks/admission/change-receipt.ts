/**
 * `receipt export --change C` (docs/receipts.md "Exporting a Change's receipt"): which receipt a Change's bundle holds
 * when the operator names the Change instead of a digest. The receipt its newest landing on the
 * target rests on; a Change not landed there yet, the receipt of its current subject when that
 * subject qualifies now. Read-only, like the export itself.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { findLatestLandingOfChange } from '../../native/landings.js';
import { resolveRepository } from '../../native/repositories.js';
import type { Store } from '../../native/store-handle.js';
import { readTransaction } from '../../native/store.js';
import { qualifyLocal } from './qualification-local.js';

export interface ChangeReceiptInput {
  readonly repository?: string | undefined;
  readonly change: string;
  readonly target: string;
}

export interface ChangeReceipt {
  readonly receipt_digest: string;
  /** `landing`: the receipt the Change landed with; `qualification`: its current subject's. */
  readonly from: 'landing' | 'qualification';
}

/** The receipt digest of a Change (see the module comment); RECEIPT_NOT_FOUND when it has none. */
export function receiptOfChange(store: Store, input: ChangeReceiptInput): ChangeReceipt {
  const auth = store.authority();
  const landing = readTransaction(auth, () => {
    const repository = resolveRepository(auth, input.repository).id;
    return findLatestLandingOfChange(auth, repository, input.target, input.change);
  });
  if (landing !== null) return { receipt_digest: landing.receipt_digest, from: 'landing' };
  const answer = qualifyLocal(store, {
    repository: input.repository,
    profile: 'default',
    target: input.target,
    change: input.change,
  });
  if (answer.qualified && answer.receipt_digest !== null)
    return { receipt_digest: answer.receipt_digest, from: 'qualification' };
  throw new AgentscmError(
    'RECEIPT_NOT_FOUND',
    `Change ${input.change} has not landed on target ${input.target} and its current version does not qualify`,
    { hint: `\`agentscm qualification --change ${input.change}\` says what is missing` },
  );
}
