/** Policy epochs: one u64 counter per repository, starting at 0 (issue 2 §3). */
import { AgentscmError } from '../contracts/errors.js';
import { U64_MAX } from '../contracts/json/json-value.js';
import { checkRepositoryId } from './checks.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { prepared, writeTransaction, type Authority } from './store.js';

export interface PolicyBump {
  readonly repository: string;
  readonly previous_epoch: bigint;
  readonly policy_epoch: bigint;
}

/** Seed epoch 0 for a new repository (caller's write transaction). */
export function initPolicyEpoch(auth: Authority, repository: string): void {
  prepared(auth, 'INSERT INTO policy_epochs (repository, epoch) VALUES (?, ?)').run(repository, u64ToSql(0n));
}

/** The repository's current policy epoch (REPOSITORY_NOT_FOUND if unknown). */
export function currentPolicyEpoch(auth: Authority, repository: string): bigint {
  checkRepositoryId(repository);
  const row = prepared(auth, 'SELECT epoch FROM policy_epochs WHERE repository = ?').get(repository) as
    { epoch: string } | undefined;
  if (row === undefined)
    throw new AgentscmError('REPOSITORY_NOT_FOUND', `no repository ${repository} in the native store`);
  return u64FromSql(row.epoch);
}

/**
 * Increment the policy epoch by one in a writer transaction; everything bound to the old
 * epoch stops being current. The u64 maximum cannot be bumped past (POLICY_EPOCH_EXHAUSTED).
 */
export function bumpPolicyEpoch(auth: Authority, repository: string): PolicyBump {
  return writeTransaction(auth, () => {
    const previous = currentPolicyEpoch(auth, repository);
    if (previous >= U64_MAX) {
      throw new AgentscmError(
        'POLICY_EPOCH_EXHAUSTED',
        `policy epoch of ${repository} is at the u64 maximum and cannot be bumped`,
      );
    }
    const next = previous + 1n;
    prepared(auth, 'UPDATE policy_epochs SET epoch = ? WHERE repository = ?').run(u64ToSql(next), repository);
    return { repository, previous_epoch: previous, policy_epoch: next };
  });
}
