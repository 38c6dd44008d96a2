import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { listRuns, type RunListItem } from '../../workflows/run-list.js';

export default class SkillWorkflowList extends BaseCommand {
  static override summary = 'List the workflow runs of the journal.';
  static override description =
    'Read-only: every run, oldest first, with its repository (name and ID), revision, state and step count. ' +
    '`skill-workflow status RUN_ID` shows one run in full. Nothing is created.';
  static override examples = ['<%= config.bin %> skill-workflow list', '<%= config.bin %> skill-workflow list --json'];

  async run(): Promise<{ runs: RunListItem[] }> {
    const { flags } = await this.parse(SkillWorkflowList);
    const list = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) => listRuns(store));
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
