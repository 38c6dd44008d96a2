import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { withStore } from '../../tasks/store.js';
import { addReviewCheck, type ReviewCheckResult } from '../../workflows/checks/checks.js';
import { COVERAGE_SHOWN } from '../../workflows/checks/coverage-glob.js';
import { workspaceDataDir } from '../../workspace/locate.js';
import { printChange } from './_print.js';
import { changeFlag, requireWorkspaceRepository, scopeFlags } from './_shared.js';

export default class CheckAddReview extends BaseCommand {
  static override summary = 'Add a review check: a review policy, a workflow step, a checkpoint and the requirement.';
  static override description =
    'Expands each --coverage glob against the files a checkpoint would record, writes ' +
    '.agentscm-checks/NAME.review-policy.json (exposing the covered paths), a review step with the exact ' +
    'coverage paths, criteria and default budgets, then checkpoints and installs as `check add` does. ' +
    'See docs/checks.md.';
  static override examples = [
    '<%= config.bin %> check add-review docs --coverage README.md --criterion clear:"the README says how to build"',
    '<%= config.bin %> check add-review api --coverage "src/**/*.ts" --criterion typed:"no any in exported types"',
  ];
  static override args = {
    name: Args.string({ description: 'Check name (a-z, 0-9, "-", "_"; at most 63).', required: true }),
  };
  static override flags = {
    ...scopeFlags,
    ...changeFlag,
    coverage: Flags.string({
      description: 'Path or glob (*, ?, **, [a-z]) the review must cover in full, expanded now (repeatable).',
      required: true,
      multiple: true,
      helpValue: 'PATH|GLOB',
    }),
    criterion: Flags.string({
      description: 'Criterion as ID:TEXT (repeatable).',
      required: true,
      multiple: true,
      helpValue: 'ID:TEXT',
    }),
    instructions: Flags.string({ description: "Reviewer instructions (default: docs/checks.md's text)." }),
  };

  async run(): Promise<ReviewCheckResult> {
    const { args, flags } = await this.parse(CheckAddReview);
    const dataDir =
      flags['data-dir'] === undefined ? workspaceDataDir(flags.workspace) : this.resolveDataDir(flags['data-dir']);
    requireWorkspaceRepository(dataDir, flags);
    const result = withStore(dataDir, 'write', (store) =>
      addReviewCheck(
        store,
        { workspace: flags.workspace, target: flags.target, change: flags.change },
        {
          name: args.name,
          review: { coverage: flags.coverage, criteria: flags.criterion, instructions: flags.instructions },
        },
      ),
    );
    printChange(this, 'added', result);
    const { coverage } = result;
    this.log(`covers ${coverage.length} path${coverage.length === 1 ? '' : 's'}:`);
    for (const path of coverage.slice(0, COVERAGE_SHOWN)) this.log(`  ${path}`);
    if (coverage.length > COVERAGE_SHOWN)
      this.log(`  … and ${coverage.length - COVERAGE_SHOWN} more (--json lists all)`);
    return result;
  }
}
