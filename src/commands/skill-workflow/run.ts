import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { openStore } from '../../tasks/store.js';
import { readDefinitionBytes } from '../../workflows/definition-file.js';
import { runWorkflow, type AdvanceReport } from '../../workflows/runner.js';
import { formatRunLines } from '../../workflows/status-text.js';
import { maxStepsFlag, reviewFlags, runExitCode, runtimeFlags, withRuntime } from './_runtime.js';

export default class SkillWorkflowRun extends BaseCommand {
  static override summary = 'Start or reopen a workflow run and advance it by at most --max-steps steps.';
  static override description =
    'The run ID is an idempotency key: the same plan reopens the retained run, a different plan is a conflict ' +
    '(exit 3). Each completed step is persisted before the next starts. Exit 0 while the run is running or ' +
    'completed (with or without omissions), 1 when it failed, is blocked or cancelled, or stopped at a command ' +
    'attempt that needs recovery. A reachable command step needs --docker and --docker-socket; a reachable ' +
    'review step needs --review-executable, --review-model, --review-provider-scope and --review-state-dir ' +
    '(docs/review.md).';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow run local-run-1 workflow.json',
    '<%= config.bin %> skill-workflow run local-run-1 workflow.json --max-steps 1 --json',
    '<%= config.bin %> skill-workflow run local-run-1 workflow.json --docker /usr/local/bin/docker ' +
      '--docker-socket /var/run/docker.sock',
    '<%= config.bin %> skill-workflow run local-run-1 workflow.json --review-executable /opt/claude/bin/claude ' +
      '--review-model claude-sonnet-4-5 --review-provider-scope my-org --review-state-dir ~/.agentscm-review ' +
      '--review-env HOME --review-env PATH --review-env ANTHROPIC_API_KEY',
  ];
  static override args = {
    'run-id': Args.string({ description: 'Run ID (idempotency key, [A-Za-z0-9._-]{1,128}).', required: true }),
    file: Args.string({ description: 'Workflow definition JSON file.', required: true }),
  };
  static override flags = { 'max-steps': maxStepsFlag, ...runtimeFlags, ...reviewFlags };

  async run(): Promise<AdvanceReport> {
    const { args, flags } = await this.parse(SkillWorkflowRun);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const bytes = readDefinitionBytes(args.file);
    const store = openStore(dataDir, { mode: 'write' });
    let report: AdvanceReport;
    try {
      report = await withRuntime(flags, (runtime, signal, reviewRuntime) =>
        runWorkflow(
          { store, runtime, reviewRuntime, signal, onProgress: this.progressSink },
          args['run-id'],
          bytes,
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
