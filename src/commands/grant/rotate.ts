import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { rotateGrantInStore, type RotateResult } from '../../native/grants.js';
import { withStore } from '../../tasks/store.js';

export default class GrantRotate extends BaseCommand {
  static override summary = 'Give a grant a new token (generation + 1); the old token stops working at once.';
  static override description =
    "Writes a new token to a NEW file (mode 0600, never overwriting one) and raises the grant's generation by " +
    'one in the same authority transaction that makes the old token invalid. Task operations already running ' +
    'under the old token are refused at their next authorization recheck. A revoked grant cannot be rotated ' +
    '(GRANT_REVOKED).';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data grant rotate g-0123456789abcdef0123456789abcdef --token-file ' +
      './alice-2.token',
  ];
  static override args = {
    grant_id: Args.string({ description: 'Grant id printed by `grant create` or `grant list`.', required: true }),
  };
  static override flags = {
    'token-file': Flags.string({
      description:
        'New file to write the new token to (created 0600; refused if it exists; missing directories are ' +
        'created 0700).',
      required: true,
      helpValue: 'PATH',
    }),
  };

  async run(): Promise<RotateResult> {
    const { args, flags } = await this.parse(GrantRotate);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      rotateGrantInStore(store, args.grant_id, flags['token-file'], Date.now()),
    );
    this.log(
      `grant ${result.grant.grant_id}: generation ${result.previous_generation} → ${result.grant.generation}; ` +
        `the old token no longer works`,
    );
    for (const dir of result.created_directories) this.log(`created directory ${dir} (mode 0700)`);
    this.log(`token written to ${result.token_file} (mode 0600)`);
    return result;
  }
}
