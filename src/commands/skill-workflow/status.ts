import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { formatRunLines } from '../../workflows/status-text.js';
import { readRunStatus, type RunView } from '../../workflows/status.js';

export default class SkillWorkflowStatus extends BaseCommand {
  static override summary = 'Show a workflow run: state, step results and observations, command executions.';
  static override description =
    'Read-only: never creates a missing journal or store, and says when another controller is active. The JSON ' +
    'form includes "admission": "not_assessed" — a run is an observation, never an approval — and, for command ' +
    'steps, the durable attempt under "execution".';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow status local-run-1',
    '<%= config.bin %> skill-workflow status local-run-1 --json',
  ];
  static override args = {
    'run-id': Args.string({ description: 'Run ID.', required: true }),
  };

  async run(): Promise<RunView> {
    const { args, flags } = await this.parse(SkillWorkflowStatus);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const view = withStore(dataDir, 'read', (store) => readRunStatus(store, args['run-id']));
    for (const line of formatRunLines(view, { dataDir })) this.log(line);
    return view;
  }
}
