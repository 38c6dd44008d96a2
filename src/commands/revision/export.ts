import { Args, Flags } from '@oclif/core';

import { BaseCommand, repositoryFlag } from '../_base.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { exportRevision } from '../../git/export.js';
import { withStore } from '../../tasks/store.js';

export default class RevisionExport extends BaseCommand {
  static override summary = 'Write a revision into a git repository as a commit and point a ref at it.';
  static override description =
    "Writes the revision's tree (the objects git lacks) and one commit without parent, author and committer " +
    '`agentscm <agentscm@localhost>` (or --author) at time 0 with an Agentscm-Revision trailer, so the same ' +
    'revision always gives the same commit ID; then sets REF to it (docs/git.md "Exporting revisions and candidate ' +
    'versions").';
  static override examples = ['<%= config.bin %> revision export 1a2b3c4d --git-repo ../app --ref refs/heads/inspect'];
  static override args = {
    revision: Args.string({ description: 'Revision ID or unique prefix (8+ hex digits).', required: true }),
  };
  static override flags = {
    'git-repo': Flags.string({ description: 'Git work tree to write to.', required: true, helpValue: 'PATH' }),
    ref: Flags.string({ description: 'Full ref to set (refs/...).', required: true, helpValue: 'REF' }),
    author: Flags.string({ description: 'Author and committer, "Name <email>".', helpValue: '"NAME <EMAIL>"' }),
    repository: repositoryFlag,
  };

  async run(): Promise<JsonObject> {
    const { args, flags } = await this.parse(RevisionExport);
    const answer = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      exportRevision(store.authority(), {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        revision: args.revision,
        gitRepo: flags['git-repo'],
        ref: flags.ref,
        ...(flags.author === undefined ? {} : { author: flags.author }),
      }),
    );
    this.log(`exported revision ${answer.revision} as ${answer.commit} (${answer.ref} in ${answer.git_repo})`);
    return { ...answer };
  }
}
