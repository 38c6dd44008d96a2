import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { revokeGrantInStore, type RevokeGrantResult } from '../../native/grants.js';
import { withStore } from '../../tasks/store.js';

export default class GrantRevoke extends BaseCommand {
  static override summary = 'Revoke a grant: every token of it stops working at once, for good.';
  static override description =
    'Marks the grant revoked in one authority transaction. A task operation that authenticated before the ' +
    'revocation is refused at its authorization recheck inside its own transaction, so nothing commits under a ' +
    'revoked grant. Revocation is final; revoking twice changes nothing and says so.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data grant revoke g-0123456789abcdef0123456789abcdef --json',
  ];
  static override args = {
    grant_id: Args.string({ description: 'Grant id printed by `grant create` or `grant list`.', required: true }),
  };

  async run(): Promise<RevokeGrantResult> {
    const { args, flags } = await this.parse(GrantRevoke);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      revokeGrantInStore(store, args.grant_id, Date.now()),
    );
    this.log(
      result.already_revoked
        ? `grant ${result.grant.grant_id} was already revoked`
        : `revoked grant ${result.grant.grant_id}`,
    );
    return result;
  }
}
