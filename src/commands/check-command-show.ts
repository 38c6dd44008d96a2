import { Args } from '@oclif/core';

import { withStore } from '../tasks/store.js';
import { showCommandAttempt, type CommandAttemptView } from '../workflows/command-attempts.js';
import { BaseCommand } from './_base.js';

export default class CheckCommandShow extends BaseCommand {
  static override description =
    'Show one durable command attempt: state, outcome, the exact request, the execution record with its digest, ' +
    'and the retained stdout and stderr. Reads the journal read-only.';

  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data check-command-show cmd-3f2a…',
    '<%= config.bin %> check-command-show ATTEMPT_ID --json',
  ];

  static override args = {
    attempt: Args.string({
      description: "Attempt ID, as shown under a step's execution member of `skill-workflow status`.",
      required: true,
    }),
  };

  async run(): Promise<CommandAttemptView> {
    const { args, flags } = await this.parse(CheckCommandShow);
    const view = withStore(this.resolveDataDir(flags['data-dir']), 'read', (store) =>
      showCommandAttempt(store, args.attempt),
    );
    this.log(`attempt ${view.attempt_id} (run ${view.run_id}, step ${view.step_id}, generation ${view.generation})`);
    // The summary starts with the outcome ("outcome failed, exit 3, …"); without one, say the outcome alone.
    this.log(`  state ${view.state}; ${view.summary ?? `outcome ${view.outcome ?? '(none yet)'}`}`);
    this.log(`  record digest ${view.record_digest ?? '(none)'}`);
    this.log(`  stdout ${view.stdout.bytes} bytes, stderr ${view.stderr.bytes} bytes`);
    if (view.stdout.bytes > 0) this.log(`--- stdout\n${view.stdout.text}`);
    if (view.stderr.bytes > 0) this.log(`--- stderr\n${view.stderr.text}`);
    return view;
  }
}
