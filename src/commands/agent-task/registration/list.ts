import { BaseCommand, listRepositoryFlag } from '../../_base.js';
import { listRegistrationsInStore, type RegistrationListItem } from '../../../native/listings.js';
import { withStore } from '../../../tasks/store.js';

export default class AgentTaskRegistrationList extends BaseCommand {
  static override summary = 'List executor registrations.';
  static override description =
    'Read-only: every executor registration, oldest first, with its repository (name and ID), workflow profile, ' +
    'step, executor, epoch, verification key ID and state (current, superseded or revoked).';
  static override examples = [
    '<%= config.bin %> agent-task registration list',
    '<%= config.bin %> agent-task registration list --repository demo --json',
  ];
  static override flags = {
    repository: listRepositoryFlag,
  };

  async run(): Promise<{ registrations: RegistrationListItem[] }> {
    const { flags } = await this.parse(AgentTaskRegistrationList);
    const list = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      listRegistrationsInStore(store.authority(), { repository: this.repositoryOf(flags.repository, store.dataDir) }),
    );
    if (list.registrations.length === 0)
      this.log('no executor registrations (`agentscm agent-task enroll` records one)');
    for (const r of list.registrations) {
      const state = r.revoked ? 'revoked' : r.current ? 'current' : 'superseded';
      this.log(
        `${r.repository_name} (${r.repository})  profile ${r.profile}  step ${r.step}  executor ${r.executor_id} ` +
          ` epoch ${r.registration_epoch}  ${state}  ${r.registration_id}`,
      );
    }
    return list;
  }
}
