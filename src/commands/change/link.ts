import { Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import { AgentscmError } from '../../contracts/errors.js';
import { FORGE_KINDS } from '../../contracts/hub-config.js';
import { exportedCandidate } from '../../git/export.js';
import { linkChange, unlinkChange, type ForgeLink } from '../../hub/forge-links.js';
import { withStore } from '../../tasks/store.js';

export default class ChangeLink extends BaseCommand {
  static override summary =
    'Link a Change to the forge commit it is the candidate of, so the hub publishes its qualification there.';
  static override description =
    'Records that the Change is the candidate of a pull request (GitHub) or merge request (GitLab) whose head ' +
    "commit is --sha in --project. A hub profile with publish_forge_status: true then publishes the Change's " +
    'qualification state (pending, success or failure, context agentscm/qualification) as a commit status on ' +
    "that commit, and again whenever it changes. Linking again replaces the Change's link (e.g. after a new " +
    'push); --remove takes it out. The link is operator metadata kept in DATA_DIR/forge/links.sqlite: it is not ' +
    'evidence and admission never reads it.';
  static override examples = [
    '<%= config.bin %> change link --change fix-parser --forge github --project acme/widgets --sha ' +
      '3f786850e387550fdab836ed7e6dc881de23001b',
    '<%= config.bin %> change link --change fix-parser --forge gitlab --project platform/tools/widgets --sha ' +
      '"$(git rev-parse HEAD)" --json',
    '<%= config.bin %> change link --change fix-parser --remove',
  ];
  static override flags = {
    change: Flags.string({ description: 'The Change ID.', required: true, helpValue: 'ID' }),
    forge: Flags.string({ description: 'The forge that holds the pull or merge request.', options: [...FORGE_KINDS] }),
    project: Flags.string({
      description: 'GitHub: OWNER/NAME; GitLab: the project path (GROUP/NAME, subgroups allowed) or its numeric ID.',
      helpValue: 'PROJECT',
    }),
    sha: Flags.string({
      description:
        'The full lowercase hex SHA of the pull or merge request head commit (default with --git-repo: the commit ' +
        '`change export` wrote for the current version).',
      helpValue: 'SHA',
    }),
    'git-repo': Flags.string({
      description: 'Git work tree whose refs/agentscm/changes/CHANGE/vN gives --sha when it is left out.',
      helpValue: 'PATH',
    }),
    remove: Flags.boolean({ description: "Remove the Change's link instead of recording one.", default: false }),
    repository: repositoryFlag,
  };

  async run(): Promise<ForgeLink | { change_id: string; removed: boolean }> {
    const { flags } = await this.parse(ChangeLink);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    if (flags.remove) {
      if (
        flags.forge !== undefined ||
        flags.project !== undefined ||
        flags.sha !== undefined ||
        flags['git-repo'] !== undefined
      ) {
        throw new AgentscmError('USAGE', '--remove takes no --forge, --project or --sha', {
          hint: 'run `agentscm change link --change ID --remove`',
        });
      }
      const removed = withStore(dataDir, 'read', (store) =>
        unlinkChange({ store, repository: this.repositoryOf(flags.repository, dataDir), change: flags.change }),
      );
      this.log(removed ? `Change ${flags.change}: forge link removed` : `Change ${flags.change} had no forge link`);
      return { change_id: flags.change, removed };
    }
    const gitRepo = flags['git-repo'];
    if (
      flags.forge === undefined ||
      flags.project === undefined ||
      (flags.sha === undefined && gitRepo === undefined)
    ) {
      throw new AgentscmError('USAGE', 'linking needs --forge, --project and --sha (or --git-repo)', {
        hint: 'pass all three, or --remove to take a link out',
      });
    }
    const forge = flags.forge as (typeof FORGE_KINDS)[number];
    const { project } = flags;
    const sha =
      flags.sha ??
      withStore(dataDir, 'read', (store) =>
        exportedCandidate(store.authority(), this.repositoryOf(flags.repository, dataDir), flags.change, gitRepo ?? ''),
      );
    const link = withStore(dataDir, 'read', (store) =>
      linkChange({
        store,
        repository: this.repositoryOf(flags.repository, dataDir),
        change: flags.change,
        forge,
        project,
        sha,
      }),
    );
    this.log(`Change ${link.change_id} is the candidate of ${link.forge} ${link.project}@${link.sha}`);
    return link;
  }
}
