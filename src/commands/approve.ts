import { Flags } from '@oclif/core';

import type { JsonObject } from '../contracts/json/json-value.js';
import { approveChange } from '../tasks/admission/admission.js';
import { withStore } from '../tasks/store.js';
import { BaseCommand, repositoryFlag } from './_base.js';

export default class Approve extends BaseCommand {
  static override summary = "Approve a Change's exact current subject and the receipt that qualifies it.";
  static override description =
    "Runs admission's checks (docs/admission.md) on the Change's current subject — its current version and " +
    'revision, the review context --context names (default: the only context of that version), the policy epoch, ' +
    "the target and its installed requirement — and records the operator's approval bound to that exact subject " +
    'and the receipt that qualifies it: the imported v2 receipt, or the receipt of a completed server-executed ' +
    'run. A stale or unqualified subject is refused with a code and the next step, and nothing is recorded; ' +
    'approving the same subject and receipt again records nothing new. An approval is not a landing: `agentscm ' +
    'land` rechecks everything.';
  static override examples = [
    '<%= config.bin %> approve --change fix-parser',
    '<%= config.bin %> --data-dir ./agentscm-data approve --change fix-parser --target main --json',
  ];
  static override flags = {
    change: Flags.string({ description: 'Change id of the subject.', required: true, helpValue: 'ID' }),
    context: Flags.string({
      description:
        "Digest (or unique prefix) of the review context of the Change's current version (default: the only one " +
        'at the current policy epoch).',
      helpValue: 'DIGEST',
    }),
    profile: Flags.string({ description: 'Workflow task profile id.', default: 'default', helpValue: 'ID' }),
    target: Flags.string({
      description: 'Protected target the approval is for (its installed requirement is checked).',
      default: 'main',
      helpValue: 'NAME',
    }),
    repository: repositoryFlag,
  };

  async run(): Promise<JsonObject> {
    const { flags } = await this.parse(Approve);
    const { approval, created, run_id } = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) =>
      approveChange(store, {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        profile: flags.profile,
        target: flags.target,
        change: flags.change,
        context: flags.context,
      }),
    );
    this.log(
      `${created ? 'approved' : 'already approved'}: Change ${approval.change_id} version ` +
        `${approval.change_version} at revision ${approval.revision} for target ${approval.target} (approval ` +
        `${approval.approval_id})`,
    );
    this.log(
      `  ${approval.receipt_kind} receipt ${approval.receipt_digest}${run_id === null ? '' : ` (run ${run_id})`}`,
    );
    return { ...approval, created, run_id };
  }
}
