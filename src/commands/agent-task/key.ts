import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { createSigningKey, type CreatedKey } from '../../collector/key-store.js';

export default class AgentTaskKey extends BaseCommand {
  static override summary = 'Generate an Ed25519 signing key for an executor or collector.';
  static override description =
    'Writes STATE_DIR/signing-key.json (mode 0600) inside STATE_DIR (created 0700 if absent). Refuses to ' +
    'overwrite an existing key file, a state directory that group or others can access, and one inside an ' +
    'agentscm workspace (a checkpoint would record the key). Prints the public key and its verification_key_id, ' +
    'which the operator passes to `agent-task enroll`.';
  static override examples = [
    '<%= config.bin %> agent-task key --state-dir ~/.agentscm-collector',
    '<%= config.bin %> agent-task key --state-dir ~/.config/agentscm/collector-ci --json',
  ];
  static override flags = {
    'state-dir': Flags.string({
      description: 'Owner-private collector state directory (0700) that holds the key file; outside every workspace.',
      required: true,
      helpValue: 'DIR',
    }),
  };

  async run(): Promise<CreatedKey> {
    const { flags } = await this.parse(AgentTaskKey);
    const created = createSigningKey(flags['state-dir']);
    this.log(`key file: ${created.key_file}`);
    this.log(`public_key: ${created.public_key}`);
    this.log(`verification_key_id: ${created.verification_key_id}`);
    return created;
  }
}
