import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { openStore } from '../../tasks/store.js';
import { resumeWorkflow, type AdvanceReport } from '../../workflows/runner.js';
import { formatRunLines } from '../../workflows/status-text.js';
import { maxStepsFlag, reviewFlags, runExitCode, runtimeFlags, withRuntime } from './_runtime.js';

export default class SkillWorkflowResume extends BaseCommand {
  static override summary = 'Revalidate a run and continue it by at most --max-steps steps.';
  static override description =
    'Recompiles the stored definition against the current native repository, revision, policy epoch and packaged ' +
    'skill bytes; a changed binding stops continuation (exit 3) and keeps every recorded observation. A partial ' +
    'resume exits 0 while the state is still running: read the state, not the exit status. A command attempt ' +
    'that did not finish is never run again, and a review call reserved in the review journal is never made ' +
    'again (the review is then uncertain).';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow resume local-run-1 --max-steps 1',
    '<%= config.bin %> skill-workflow resume local-run-1 --max-steps 1 --docker /usr/local/bin/docker ' +
      '--docker-socket /var/run/docker.sock --json',
  ];
  static override args = {
    'run-id': Args.string({ description: 'Run ID.', required: true }),
  };
  static override flags = { 'max-steps': maxStepsFlag, ...runtimeFlags, ...reviewFlags };

  async run(): Promise<AdvanceReport> {
    const { args, flags } = await this.parse(SkillWorkflowResume);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const store = openStore(dataDir, { mode: 'write' });
    let report: AdvanceReport;
    try {
      report = await withRuntime(flags, (runtime, signal, reviewRuntime) =>
        resumeWorkflow(
          { store, runtime, reviewRuntime, signal, onProgress: this.progressSink },
          args['run-id'],
          flags['max-steps'],
        ),
      );
    } finally {
      store.close();
    }
    for (const line of formatRunLines(report, { dataDir })) this.log(line);
    if (report.waiting !== null) this.logToStderr(report.waiting.message);
    process.exitCode = runExitCode(report);
    return report;
  }
}
