import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { listChecks, type CheckListing } from '../../workflows/checks/checks.js';
import { workspaceDataDir } from '../../workspace/locate.js';
import { requireWorkspaceRepository, scopeFlags } from './_shared.js';

export default class CheckList extends BaseCommand {
  static override summary = "List the workspace's checks and say whether the installed requirement agrees.";
  static override description =
    'Reads the check files of the workspace (.agentscm-checks/: the workflow, its recipes and review policies) ' +
    "and the target's installed requirement, and lists each check with its kind and file, marking a file that " +
    'is missing and a check the installed requirement does not hold (docs/checks.md). Reads only.';
  static override examples = ['<%= config.bin %> check list', '<%= config.bin %> check list --target main --json'];
  static override flags = { ...scopeFlags };

  async run(): Promise<CheckListing> {
    const { flags } = await this.parse(CheckList);
    const dataDir =
      flags['data-dir'] === undefined ? workspaceDataDir(flags.workspace) : this.resolveDataDir(flags['data-dir']);
    requireWorkspaceRepository(dataDir, flags);
    const listing = withStore(dataDir, 'read', (store) =>
      listChecks(store, { workspace: flags.workspace, target: flags.target }),
    );
    if (listing.checks.length === 0) this.log('no checks');
    for (const check of listing.checks)
      this.log(
        `${check.name}\t${check.kind}\t${check.resource}` +
          `${check.present ? '' : ' (missing)'}${check.installed ? '' : ' (not installed)'}`,
      );
    this.log(`target ${listing.target}: requirement ${listing.requirement_digest ?? '(none)'}`);
    this.log(listing.in_sync ? 'in sync' : `out of sync:\n${listing.differences.map((d) => `  ${d}`).join('\n')}`);
    return listing;
  }
}
