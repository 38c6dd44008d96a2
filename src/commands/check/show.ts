import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import { withStore } from '../../tasks/store.js';
import { showCheck, type CheckView } from '../../workflows/checks/checks.js';
import { workspaceDataDir } from '../../workspace/locate.js';
import { requireWorkspaceRepository, scopeFlags } from './_shared.js';

export default class CheckShow extends BaseCommand {
  static override summary = 'Show one check: its step, its recipe or review policy, and whether it is installed.';
  static override description =
    "Prints the check's workflow step action, its recipe (command checks) or review policy (review checks) as " +
    "written in .agentscm-checks/ (or that the file is missing), and whether the target's installed requirement " +
    'holds that step (docs/checks.md). Reads only.';
  static override examples = ['<%= config.bin %> check show unit', '<%= config.bin %> check show unit --json'];
  static override args = {
    name: Args.string({ description: 'Check name.', required: true }),
  };
  static override flags = { ...scopeFlags };

  async run(): Promise<CheckView> {
    const { args, flags } = await this.parse(CheckShow);
    const dataDir =
      flags['data-dir'] === undefined ? workspaceDataDir(flags.workspace) : this.resolveDataDir(flags['data-dir']);
    requireWorkspaceRepository(dataDir, flags);
    const view = withStore(dataDir, 'read', (store) =>
      showCheck(store, { workspace: flags.workspace, target: flags.target, name: args.name }),
    );
    this.log(`${view.name} (${view.kind}) — ${view.resource}`);
    this.log(`installed for ${view.target}: ${view.installed ? 'yes' : 'no'}`);
    this.log(`step action: ${formatJson(view.action)}`);
    this.log(view.resource_json === null ? 'resource: missing' : `resource: ${formatJson(view.resource_json)}`);
    return view;
  }
}
