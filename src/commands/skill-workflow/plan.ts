import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { bindRequirementToChange, type ChangeRunSubject } from '../../workflows/change-run.js';
import { planWorkflowFile, type PlanReport } from '../../workflows/plan-report.js';
import { formatPlanLines } from '../../workflows/status-text.js';
import { changeFlags, checkChangeForm } from './_change.js';

const USAGE = 'usage: skill-workflow plan FILE, or skill-workflow plan --change ID [--target NAME]';

export default class SkillWorkflowPlan extends BaseCommand {
  static override summary = 'Validate a workflow definition and print its plan and skill identities.';
  static override description =
    'Compiles the definition against the read-only native authority of --data-dir: repository, revision, current ' +
    'policy epoch, packaged skill bytes, dependency graph, source expectations and command bindings. Runs ' +
    "nothing and writes nothing. With --change instead of FILE, the target's installed requirement is compiled " +
    "for the Change's current version, as `skill-workflow run --change` runs it.";
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow plan workflow.json',
    '<%= config.bin %> skill-workflow plan workflow.json --json',
    '<%= config.bin %> skill-workflow plan --change fix-parser --target main --json',
  ];
  static override args = {
    file: Args.string({ description: 'Workflow definition JSON file (not with --change).', required: false }),
  };
  static override flags = { ...changeFlags };

  async run(): Promise<PlanReport & { subject?: ChangeRunSubject }> {
    const { args, flags } = await this.parse(SkillWorkflowPlan);
    checkChangeForm(flags, args.file, USAGE);
    const change = flags.change;
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const report = withStore(dataDir, 'read', (store) => {
      if (change === undefined) return planWorkflowFile(store, args.file ?? '');
      const bound = bindRequirementToChange(store, {
        repository: this.repositoryOf(flags.repository, dataDir),
        change,
        target: flags.target ?? 'main',
        context: flags.context,
      });
      return { ...bound.plan, subject: bound.subject };
    });
    if ('subject' in report && report.subject !== undefined) {
      const s = report.subject;
      this.log(
        `Change ${s.change} version ${s.change_version} under target ${s.target}'s requirement; ` +
          `default run ID ${s.run_id}`,
      );
    }
    for (const line of formatPlanLines(report)) this.log(line);
    return report;
  }
}
