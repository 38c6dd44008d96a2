import { Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { exportCandidate } from '../../git/export.js';
import { withStore } from '../../tasks/store.js';

export default class ChangeExport extends BaseCommand {
  static override summary = 'Write a candidate version of a Change into a git repository as a commit.';
  static override description =
    "Writes the version's revision as a commit (as `revision export` does, with Agentscm-Change and " +
    'Agentscm-Version trailers) and sets refs/agentscm/changes/CHANGE/vN to it, so that `change link --git-repo` ' +
    'can name that commit without --sha (docs/git.md "Exporting revisions and candidate versions").';
  static override examples = [
    '<%= config.bin %> change export --change fix-parser --git-repo ../app',
    '<%= config.bin %> change export --change fix-parser --version 2 --git-repo ../app --json',
  ];
  static override flags = {
    change: Flags.string({ description: 'The Change ID.', required: true, helpValue: 'ID' }),
    version: Flags.integer({ description: 'Version to export (default: the current one).', min: 1, helpValue: 'N' }),
    'git-repo': Flags.string({ description: 'Git work tree to write to.', required: true, helpValue: 'PATH' }),
    author: Flags.string({ description: 'Author and committer, "Name <email>".', helpValue: '"NAME <EMAIL>"' }),
    repository: repositoryFlag,
  };

  async run(): Promise<JsonObject> {
    const { flags } = await this.parse(ChangeExport);
    const answer = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      exportCandidate(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        change: flags.change,
        ...(flags.version === undefined ? {} : { version: BigInt(flags.version) }),
        gitRepo: flags['git-repo'],
        ...(flags.author === undefined ? {} : { author: flags.author }),
      }),
    );
    this.log(
      `exported Change ${answer.change_id} version ${answer.change_version.toString()} as ${answer.commit} ` +
        `(${answer.ref})`,
    );
    return { ...answer };
  }
}
