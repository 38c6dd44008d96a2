/**
 * The authority's identity (docs/wire.md "Authority identity and grants"): 32 lowercase hex, random,
 * fixed when the store is created (or when an older store is first migrated) and never changed.
 * A collector transfer names it as its audience, so another store refuses the transfer.
 */
import { AgentscmError } from '../contracts/errors.js';
import { prepared, readTransaction, type Authority } from './store.js';

const AUTHORITY_ID = /^[0-9a-f]{32}$/;

/** The store's authority_id (docs/grants.md "Authority identity": the transfer's audience). */
export function authorityId(auth: Authority): string {
  return readTransaction(auth, () => {
    const row = prepared(auth, 'SELECT authority_id FROM authority_identity WHERE singleton = 1').get() as
      { authority_id: string } | undefined;
    if (row === undefined || !AUTHORITY_ID.test(row.authority_id)) {
      throw new AgentscmError('STORE_CORRUPT', 'the native authority holds no well-formed authority_id', {
        hint: 'restore the data directory from a backup',
      });
    }
    return row.authority_id;
  });
}
