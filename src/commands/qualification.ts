import { Flags } from '@oclif/core';

import type { JsonValue } from '../contracts/json/json-value.js';
import { qualificationToJson } from '../contracts/task/qualification.js';
import { shellCommandLine } from '../native/collector-commands.js';
import { qualifyLocal } from '../tasks/admission/qualification-local.js';
import { withStore } from '../tasks/store.js';
import { BaseCommand, repositoryFlag } from './_base.js';

export default class Qualification extends BaseCommand {
  static override summary = "Say whether a Change's exact subject qualifies now (read-only, advisory).";
  static override description =
    "The operator's view of the agent-task operation `qualification` (docs/qualification.md): for the Change's " +
    'subject — its current version and the review context --context names (default: the only context of that ' +
    'version) — prints whether it is qualified, whether the subject is still current, the receipt digest (only ' +
    "when qualified), the subject revision, each task's state (pending, claimed, succeeded, failed, uncertain, " +
    'blocked), at most 32 typed failures (task id and a stable code) and the next step as data (collector_claim ' +
    "or reconcile with a task id, collector_finalize, checkpoint, none; a collector_claim names the step's " +
    'installed collector profile and, with --token-file, prints the exact claim and collect lines). It opens the ' +
    'existing stores read-only and never finalizes, writes a receipt or changes a task; landing rechecks ' +
    'everything. Exit status: 0 when ' +
    'qualified, 1 when not (the answer is printed either way), 2 for bad input, 4 when a store is unavailable.';
  static override examples = [
    '<%= config.bin %> qualification --change fix-parser',
    '<%= config.bin %> --data-dir ./agentscm-data qualification --change fix-parser --context 5f3c…e2 --json',
  ];
  static override flags = {
    change: Flags.string({ description: 'Change id of the subject.', required: true, helpValue: 'ID' }),
    context: Flags.string({
      description:
        "Digest of the review context of the Change's current version (default: the only one at the current " +
        'policy epoch).',
      helpValue: 'DIGEST',
    }),
    profile: Flags.string({ description: 'Workflow task profile id.', default: 'default', helpValue: 'ID' }),
    target: Flags.string({
      description: 'Protected target whose installed requirement the tasks come from.',
      default: 'main',
      helpValue: 'NAME',
    }),
    repository: repositoryFlag,
    'token-file': Flags.string({
      description:
        "The agent's grant token file: a collector_claim next then carries the exact claim and collect command " +
        'lines (printed as `$ agentscm …`, in --json as next.commands).',
      helpValue: 'FILE',
    }),
  };

  async run(): Promise<JsonValue> {
    const { flags } = await this.parse(Qualification);
    const answer = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      qualifyLocal(store, {
        repository: this.repositoryOf(flags.repository, store.dataDir),
        profile: flags.profile,
        target: flags.target,
        change: flags.change,
        context: flags.context,
        tokenFile: flags['token-file'],
      }),
    );
    this.log(
      `${answer.qualified ? 'qualified' : 'not qualified'}: Change ${flags.change} at revision ` +
        `${answer.revision}${answer.subject_current ? '' : ' (subject superseded)'}`,
    );
    if (answer.receipt_digest !== null) this.log(`  receipt ${answer.receipt_digest}`);
    for (const task of answer.tasks)
      this.log(`  ${task.state.padEnd(9)} ${task.step_id}${task.required ? '' : ' (optional)'} ${task.task_id}`);
    for (const failure of answer.failures) this.log(`  failure ${failure.code} (task ${failure.task_id})`);
    const next = answer.next;
    const profile = 'collector_profile_id' in next ? ` under collector profile ${next.collector_profile_id}` : '';
    this.log(`  next ${next.operation}${'task_id' in next ? ` ${next.task_id}` : ''}${profile}`);
    for (const argv of next.commands ?? []) this.log(`$ ${shellCommandLine(argv)}`);
    if (!answer.qualified) process.exitCode = 1;
    return qualificationToJson(answer);
  }
}
