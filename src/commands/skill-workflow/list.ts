import { BaseCommand, listRepositoryFlag } from '../_base.js';
import { resolveRepository } from '../../native/repositories.js';
import { withStore } from '../../tasks/store.js';
import { listRuns, type RunListItem } from '../../workflows/run-list.js';

export default class SkillWorkflowList extends BaseCommand {
  static override summary = 'List the workflow runs of the journal.';
  static override description =
    'Read-only: every run, oldest first, with its repository (name and ID), revision, state and step count; ' +
    'with --repository, or inside a workspace, only the runs of that repository. ' +
    '`skill-workflow status RUN_ID` shows one run in full. Nothing is created.';
  static override examples = [
    '<%= config.bin %> skill-workflow list',
    '<%= config.bin %> skill-workflow list --repository demo --json',
  ];
  static override flags = { repository: listRepositoryFlag };

  async run(): Promise<{ runs: RunListItem[] }> {
    const { flags } = await this.parse(SkillWorkflowList);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const reference = this.repositoryOf(flags.repository, dataDir);
    const list = withStore(dataDir, 'read', (store) => {
      // An unknown --repository is REPOSITORY_NOT_FOUND, as for the other list commands.
      const only = reference === undefined ? null : resolveRepository(store.authority(), reference).id;
      const all = listRuns(store);
      return only === null ? all : { runs: all.runs.filter((r) => r.repository === only) };
    });
    if (list.runs.length === 0) this.log('no workflow runs');
    for (const r of list.runs) {
      this.log(
        `${r.run_id}  ${r.state}  ${r.name}  ${r.repository_name ?? '?'} (${r.repository})  revision ` +
          `${r.revision}  ${r.step_count} ${r.step_count === 1 ? 'step' : 'steps'}`,
      );
    }
    return list;
  }
}
