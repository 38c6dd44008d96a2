import { Flags } from '@oclif/core';

import { ERROR_CODES } from '../contracts/errors.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { landWithGit } from '../tasks/admission/land-git.js';
import { withStore } from '../tasks/store.js';
import { BaseCommand, repositoryFlag } from './_base.js';

export default class Land extends BaseCommand {
  static override summary =
    "Move a target to an approved Change's revision after rechecking everything under the authority lock.";
  static override description =
    "Under the native authority's writer lock (docs/admission.md) rechecks the exact current subject of the " +
    "Change's newest approval, the installed policy and requirement, the retained signed transfers and their " +
    'records, the collector profiles, executor registrations and revocations, the live origin grant of every ' +
    'imported task, every command step of the command/v1 context, and that the approval binds exactly this ' +
    "subject and receipt; then moves the target to the Change's revision and records the landing (what landed, " +
    "from which revision, when, on which approval and receipt). The target must be at the base the Change's " +
    'revision descends from, otherwise the landing is a conflict (exit 3) whose hint says to checkpoint on the ' +
    'new target. Every refusal names its code and next step, and changes nothing. When the target is linked to a git ' +
    'branch (`target link`), the landing is then written as a git commit (docs/git.md "Landing to git"); a git ' +
    'failure leaves the landing recorded and its mirror pending (exit code of the git error, `git.state` pending).';
  static override examples = [
    '<%= config.bin %> land --change fix-parser --target main',
    '<%= config.bin %> --data-dir ./agentscm-data land --change fix-parser --target main --json',
  ];
  static override flags = {
    change: Flags.string({ description: 'Change id to land.', required: true, helpValue: 'ID' }),
    target: Flags.string({ description: 'Protected target to move.', required: true, helpValue: 'NAME' }),
    profile: Flags.string({
      description: 'Workflow task profile id of the approval.',
      default: 'default',
      helpValue: 'ID',
    }),
    repository: repositoryFlag,
  };

  async run(): Promise<JsonObject> {
    const { flags } = await this.parse(Land);
    const { landing, git } = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      landWithGit(store, {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        profile: flags.profile,
        target: flags.target,
        change: flags.change,
      }),
    );
    this.log(
      `landed: Change ${landing.change_id} version ${landing.change_version} moved target ${landing.target} from ` +
        `${landing.previous_revision} to ${landing.revision}`,
    );
    this.log(
      `  approval ${landing.approval_id}, ${landing.receipt_kind} receipt ${landing.receipt_digest} (landing ` +
        `${landing.landing_id})`,
    );
    if (git === null) return { ...landing };
    if (git.state === 'written') {
      this.log(`  git: ${git.report.branch} at ${git.commit ?? '(none)'} in ${git.report.git_repo}`);
      return { ...landing, git: { state: 'written', commit: git.commit, branch: git.report.branch } };
    }
    // The landing stands; its git mirror is pending (docs/git.md "Repair after a crash").
    const { error } = git;
    process.stderr.write(`error[${error.code}]: ${error.message}; ${error.hint ?? ''}\n`);
    process.exitCode = ERROR_CODES[error.code].exit;
    return {
      ...landing,
      git: { state: 'pending', error: { code: error.code, message: error.message, hint: error.hint ?? '' } },
    };
  }
}
