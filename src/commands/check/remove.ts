import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { removeCheck, type CheckChangeResult } from '../../workflows/checks/checks.js';
import { workspaceDataDir } from '../../workspace/locate.js';
import { printChange } from './_print.js';
import { changeFlag, requireWorkspaceRepository, scopeFlags } from './_shared.js';

export default class CheckRemove extends BaseCommand {
  static override summary = 'Remove a check: its step and resource go, the rest is checkpointed and reinstalled.';
  static override description =
    'The last check is never removed (CHECK_LAST): a requirement needs a step and is never uninstalled; add its ' +
    'replacement first. See docs/checks.md.';
  static override examples = ['<%= config.bin %> check remove lint', '<%= config.bin %> check remove lint --json'];
  static override args = {
    name: Args.string({ description: 'Check name.', required: true }),
  };
  static override flags = { ...scopeFlags, ...changeFlag };

  async run(): Promise<CheckChangeResult> {
    const { args, flags } = await this.parse(CheckRemove);
    const dataDir =
      flags['data-dir'] === undefined ? workspaceDataDir(flags.workspace) : this.resolveDataDir(flags['data-dir']);
    requireWorkspaceRepository(dataDir, flags);
    const result = withStore(dataDir, 'write', (store) =>
      removeCheck(store, { workspace: flags.workspace, target: flags.target, change: flags.change }, args.name),
    );
    printChange(this, 'removed', result);
    return result;
  }
}
