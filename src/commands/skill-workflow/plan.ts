import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { planWorkflowFile, type PlanReport } from '../../workflows/plan-report.js';
import { formatPlanLines } from '../../workflows/status-text.js';

export default class SkillWorkflowPlan extends BaseCommand {
  static override summary = 'Validate a workflow definition and print its plan and skill identities.';
  static override description =
    'Compiles the definition against the read-only native authority of --data-dir: repository, revision, current ' +
    'policy epoch, packaged skill bytes, dependency graph, source expectations and command bindings. Runs ' +
    'nothing and writes nothing.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow plan workflow.json',
    '<%= config.bin %> skill-workflow plan workflow.json --json',
  ];
  static override args = {
    file: Args.string({ description: 'Workflow definition JSON file.', required: true }),
  };

  async run(): Promise<PlanReport> {
    const { args, flags } = await this.parse(SkillWorkflowPlan);
    const report = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      planWorkflowFile(store, args.file),
    );
    for (const line of formatPlanLines(report)) this.log(line);
    return report;
  }
}
