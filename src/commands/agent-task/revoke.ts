import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { revokeRegistration, type RevokeResult } from '../../native/executor-registry.js';
import { withStore } from '../../tasks/store.js';

export default class AgentTaskRevoke extends BaseCommand {
  static override summary = 'Revoke an executor registration.';
  static override description =
    'Records an immutable revocation in the native authority. Observations under the registration stop counting ' +
    'even if they were retained earlier; enrolling again makes a new epoch and never rehabilitates them. ' +
    'Revoking twice changes nothing.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task revoke reg-0123456789abcdef0123456789abcdef ' +
      '--reason "key rotated"',
  ];
  static override args = {
    registration_id: Args.string({ description: 'Registration id printed by `agent-task enroll`.', required: true }),
  };
  static override flags = {
    reason: Flags.string({ description: 'Why the registration is revoked (at most 1024 bytes).', helpValue: 'TEXT' }),
  };

  async run(): Promise<RevokeResult> {
    const { args, flags } = await this.parse(AgentTaskRevoke);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      revokeRegistration(store.authority(), args.registration_id, flags.reason ?? null),
    );
    this.log(
      result.already_revoked ? `${result.registration_id} was already revoked` : `revoked ${result.registration_id}`,
    );
    return result;
  }
}
