import { Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { DEFAULT_TASK_PROFILE } from '../../contracts/collector/executor-enrollment.js';
import { enrollExecutor, type EnrollResult } from '../../native/executor-registry.js';
import { readPublicKeyFile } from '../../native/public-key-file.js';
import { withStore } from '../../tasks/store.js';

export default class AgentTaskEnroll extends BaseCommand {
  static override summary = 'Enroll an executor public key for one repository, profile and step.';
  static override description =
    'Records an operator-supplied Ed25519 public key as a new immutable registration epoch in the native ' +
    'authority (one above the newest epoch of the same repository/profile/step/executor). Generates no keys or ' +
    'credentials. Warns (stderr, and "warnings" in JSON) when no installed requirement of the repository has the ' +
    'step. Enrollment grants no execution, source access or landing permission; observations it signs stay ' +
    'nonpassing.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task enroll --repository demo --step unit-tests ' +
      '--executor ci-box --public-key 3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29',
  ];
  static override flags = {
    repository: repositoryFlag,
    profile: Flags.string({
      description: 'Workflow task profile id the enrollment is scoped to (the same default as `agent-task call`).',
      default: DEFAULT_TASK_PROFILE,
      helpValue: 'ID',
    }),
    step: Flags.string({
      description: 'Workflow step id the enrollment is scoped to.',
      required: true,
      helpValue: 'ID',
    }),
    executor: Flags.string({ description: 'Executor id.', required: true, helpValue: 'ID' }),
    'public-key': Flags.string({
      description: 'Ed25519 public key, 64 lowercase hex (as printed by `agent-task key`).',
      exactlyOne: ['public-key', 'public-key-file'],
      helpValue: 'HEX',
    }),
    'public-key-file': Flags.string({
      description: 'A file holding the public key (64 hex), or the signing key file (`agent-task key`) itself.',
      helpValue: 'FILE',
    }),
  };

  async run(): Promise<EnrollResult> {
    const { flags } = await this.parse(AgentTaskEnroll);
    const publicKey = flags['public-key'] ?? readPublicKeyFile(flags['public-key-file'] ?? '');
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      enrollExecutor(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        profile: flags.profile,
        step: flags.step,
        executor: flags.executor,
        public_key: publicKey,
      }),
    );
    // Warnings go to stderr (and the JSON warnings member), so the printed fields stay parseable.
    for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
    this.log(`registration_id: ${result.registration_id}`);
    this.log(`registration_epoch: ${result.registration_epoch}`);
    this.log(`verification_key_id: ${result.verification_key_id}`);
    return result;
  }
}
