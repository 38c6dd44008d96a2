import { Args } from '@oclif/core';

import { BaseCommand } from '../../_base.js';
import { formatJson } from '../../../contracts/json/canonical-json.js';
import { showCollectorProfile, type CollectorProfileView } from '../../../tasks/collector/profiles.js';
import { withStore } from '../../../tasks/store.js';

export default class AgentTaskProfileShow extends BaseCommand {
  static override summary = 'Show an installed collector profile and whether its registration is still current.';
  static override description =
    'Reads the native authority only. Prints the profile in its declared order, when it was installed, and ' +
    'registration_current: false once its executor registration was revoked or superseded by re-enrollment (the ' +
    'profile then authorizes nothing).';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task profile show ' +
      'b712a244d3606edc42c95db42fbd9ea93f6aa147752be44e2f29173f4ecb8e17 --json',
  ];
  static override args = {
    id: Args.string({
      description: 'collector_profile_id printed by `agent-task profile install` (64 lowercase hex).',
      required: true,
    }),
  };

  async run(): Promise<CollectorProfileView> {
    const { args, flags } = await this.parse(AgentTaskProfileShow);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      showCollectorProfile(store, args.id),
    );
    this.log(
      `collector profile ${view.collector_profile_id} (registration ` +
        `${view.registration_current ? 'current' : 'NOT current: revoked or superseded'})`,
    );
    this.log(formatJson(view.profile));
    return view;
  }
}
