import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { AgentscmError } from '../../contracts/errors.js';
import { openStore, withStore } from '../../tasks/store.js';
import { bindRequirementToChange, type ChangeRunSubject } from '../../workflows/change-run.js';
import { readDefinitionBytes } from '../../workflows/definition-file.js';
import { runWorkflow, type AdvanceReport } from '../../workflows/runner.js';
import { formatRunLines } from '../../workflows/status-text.js';
import { changeFlags, checkChangeForm } from './_change.js';
import { maxStepsFlag, reviewFlags, runExitCode, runtimeFlags, withRuntime } from './_runtime.js';

const USAGE = 'usage: skill-workflow run RUN_ID FILE, or skill-workflow run --change ID [--target NAME] [RUN_ID]';

/** The subject line `run --change` prints before the run's lines. */
function subjectLine(runId: string, s: ChangeRunSubject): string {
  return (
    `run ${runId}: requirement ${s.requirement_digest.slice(0, 12)} of target ${s.target} on Change ${s.change} ` +
    `version ${s.change_version} (revision ${s.revision.slice(0, 12)}, context ` +
    `${s.context_digest === null ? 'none' : s.context_digest.slice(0, 12)})`
  );
}

export default class SkillWorkflowRun extends BaseCommand {
  static override summary = 'Start or reopen a workflow run and advance it by at most --max-steps steps.';
  static override description =
    'The run ID is an idempotency key: the same plan reopens the retained run, a different plan is a conflict ' +
    '(exit 3). Each completed step is persisted before the next starts. Exit 0 while the run is running or ' +
    'completed (with or without omissions), 1 when it failed, is blocked or cancelled, or stopped at a command ' +
    'attempt that needs recovery. A reachable command step runs under --docker (default: the first docker on ' +
    'PATH) and the Engine at --docker-socket (default: /var/run/docker.sock); a reachable ' +
    'review step needs --review-executable, --review-model, --review-provider-scope and --review-state-dir ' +
    '(docs/review.md). With --change instead of FILE, the installed requirement of --target (default main) is ' +
    "compiled for the Change's current version, revision, policy epoch and review context, and RUN_ID defaults " +
    'to CHANGE-vVERSION-<first 12 hex digits of the plan digest> (docs/skill-workflows.md "Running a target\'s ' +
    'requirement on a Change").';
  static override examples = [
    '<%= config.bin %> skill-workflow run --change fix-parser',
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow run local-run-1 workflow.json',
    '<%= config.bin %> skill-workflow run local-run-1 workflow.json --max-steps 1 --json',
    '<%= config.bin %> skill-workflow run local-run-1 workflow.json --docker /usr/local/bin/docker ' +
      '--docker-socket /var/run/docker.sock',
    '<%= config.bin %> skill-workflow run local-run-1 workflow.json --review-executable /opt/claude/bin/claude ' +
      '--review-model claude-sonnet-4-5 --review-provider-scope my-org --review-state-dir ~/.agentscm-review ' +
      '--review-env HOME --review-env PATH --review-env ANTHROPIC_API_KEY',
  ];
  static override args = {
    'run-id': Args.string({
      description: 'Run ID (idempotency key, [A-Za-z0-9._-]{1,128}); optional with --change.',
      required: false,
    }),
    file: Args.string({ description: 'Workflow definition JSON file (not with --change).', required: false }),
  };
  static override flags = { 'max-steps': maxStepsFlag, ...changeFlags, ...runtimeFlags, ...reviewFlags };

  async run(): Promise<AdvanceReport & { subject?: ChangeRunSubject }> {
    const { args, flags } = await this.parse(SkillWorkflowRun);
    checkChangeForm(flags, args.file, USAGE);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    let runId: string;
    let bytes: Uint8Array;
    let subject: ChangeRunSubject | undefined;
    if (flags.change === undefined) {
      if (args['run-id'] === undefined || args.file === undefined)
        throw new AgentscmError('USAGE', 'pass RUN_ID and FILE, or --change ID', { hint: USAGE });
      runId = args['run-id'];
      bytes = readDefinitionBytes(args.file);
    } else {
      const change = flags.change;
      const bound = withStore(dataDir, 'read', (store) =>
        bindRequirementToChange(store, {
          repository: this.repositoryOf(flags.repository, dataDir),
          change,
          target: flags.target ?? 'main',
          context: flags.context,
        }),
      );
      subject = bound.subject;
      runId = args['run-id'] ?? subject.run_id;
      bytes = bound.definitionBytes;
      this.log(subjectLine(runId, subject));
    }
    const store = openStore(dataDir, { mode: 'write' });
    let report: AdvanceReport;
    try {
      report = await withRuntime(flags, (runtime, signal, reviewRuntime) =>
        runWorkflow(
          { store, runtime, reviewRuntime, signal, onProgress: this.progressSink },
          runId,
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
    return subject === undefined ? report : { ...report, subject };
  }
}
