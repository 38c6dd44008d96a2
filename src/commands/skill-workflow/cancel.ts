import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { openStore } from '../../tasks/store.js';
import { cancelWorkflow, type CancelReport } from '../../workflows/cancel.js';
import { formatRunLines } from '../../workflows/status-text.js';
import { runtimeFlags, withRuntime } from './_runtime.js';

export default class SkillWorkflowCancel extends BaseCommand {
  static override summary = 'Cancel a workflow run; cancellation is terminal and keeps recorded observations.';
  static override description =
    'A controller that is between steps stops before its next step. The runtime (--docker, default the docker ' +
    'on PATH; --docker-socket, default /var/run/docker.sock) is used only while a command attempt of the run is ' +
    'still running. Cancelling a cancelled run is a no-op; a run that already ' +
    'ended otherwise is a conflict (exit 3).';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow cancel local-run-1',
    '<%= config.bin %> skill-workflow cancel local-run-1 --docker /usr/local/bin/docker --docker-socket ' +
      '/var/run/docker.sock',
  ];
  static override args = {
    'run-id': Args.string({ description: 'Run ID.', required: true }),
  };
  static override flags = { ...runtimeFlags };

  async run(): Promise<CancelReport> {
    const { args, flags } = await this.parse(SkillWorkflowCancel);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const store = openStore(dataDir, { mode: 'write' });
    let report: CancelReport;
    try {
      report = await withRuntime(flags, (runtime, signal) =>
        cancelWorkflow({ store, runtime, signal }, args['run-id']),
      );
    } finally {
      store.close();
    }
    for (const line of formatRunLines(report, { dataDir })) this.log(line);
    return report;
  }
}
