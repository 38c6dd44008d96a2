import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { instantLines } from '../_times.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { readTokenFile } from '../../native/grant-token-file.js';
import { claimToFile } from '../../tasks/collector/claim-file.js';
import { shown } from '../../tasks/collector/execution.js';
import { authorizeTaskToken } from '../../tasks/grant-guard.js';
import { withStore } from '../../tasks/store.js';

export default class AgentTaskClaim extends BaseCommand {
  static override summary =
    'Claim a command task under an installed collector profile and write its collector descriptor.';
  static override description =
    'The collector claim (operation collector_claim) of one subject, as the actor of the live grant in ' +
    "--token-file: the command task of the profile's step (or --task) is claimed with a fresh request id, " +
    "execution identity, fence and lease, the executor binding is the profile's enrolled epoch, and the attempt " +
    'records the originating grant and its generation, the profile and a fresh upload_request_id. The descriptor ' +
    '(docs/wire.md "Collector descriptor", canonical JSON) is written to --out, created with mode 0600; an ' +
    'existing file is never overwritten. Hand it to `agent-task collect`. The claim is refused, changing ' +
    'nothing, when the profile is not installed, its registration is no longer current, the profile does not fit ' +
    'the task, the task is already claimed or a needed step is incomplete (docs/agent-tasks.md "agent-task ' +
    'claim").';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task claim --profile 3f1c…9a --change fix-parser ' +
      '--context 5f3c…e2 --token-file ./alice.token --out unit.descriptor.json',
    '<%= config.bin %> agent-task claim --step tests --change fix-parser --token-file ./alice.token --out d.json',
    '<%= config.bin %> agent-task claim --profile 3f1c…9a --change fix-parser --context 5f3c…e2 --task t-0f1e… ' +
      '--token-file ./alice.token --out d.json --json',
  ];
  static override flags = {
    profile: Flags.string({
      description:
        'collector_profile_id (or unique prefix) of the installed collector profile (default: the profile of ' +
        "--step, else the only step with a current profile in the grant's repository).",
      exclusive: ['step'],
      helpValue: 'ID',
    }),
    step: Flags.string({
      description: 'Command step whose installed collector profile to claim under (instead of --profile).',
      helpValue: 'STEP',
    }),
    change: Flags.string({ description: 'Change id of the subject.', required: true, helpValue: 'ID' }),
    context: Flags.string({
      description:
        "Digest (or unique prefix) of the review context of the Change's current version (default: the only one " +
        'at the current policy epoch).',
      helpValue: 'DIGEST',
    }),
    task: Flags.string({
      description: "Task id to claim (default: the subject's task of the profile's step).",
      helpValue: 'ID',
    }),
    target: Flags.string({
      description: 'Protected target whose installed requirement the tasks come from.',
      default: 'main',
      helpValue: 'NAME',
    }),
    'lease-ms': Flags.integer({
      description: 'Requested lease in milliseconds (1 to 86400000).',
      default: 3_600_000,
      min: 1,
      max: 86_400_000,
      helpValue: 'MS',
    }),
    repository: Flags.string({
      description:
        "Repository ID or name; it must be the grant's (default: the grant's repository). Another is refused " +
        'before anything is claimed or written.',
      helpValue: 'ID_OR_NAME',
    }),
    'token-file': Flags.string({
      description: 'Token file of the grant to act under (mode 0600).',
      required: true,
      helpValue: 'FILE',
    }),
    out: Flags.string({
      description: 'Descriptor file to create (mode 0600; never overwritten).',
      required: true,
      helpValue: 'FILE',
    }),
  };

  async run(): Promise<JsonObject> {
    const { flags } = await this.parse(AgentTaskClaim);
    const result = withStore(this.resolveDataDir(flags['data-dir']), 'write', (store) => {
      // The grant decides the repository; --repository only confirms it (TASK_NOT_AUTHORIZED otherwise).
      if (flags.repository !== undefined)
        authorizeTaskToken({ store, token: readTokenFile(flags['token-file']), repository: flags.repository });
      return claimToFile({
        store,
        tokenFile: flags['token-file'],
        profileId: flags.profile,
        step: flags.step,
        change: flags.change,
        context: flags.context,
        taskId: flags.task,
        leaseMs: BigInt(flags['lease-ms']),
        out: flags.out,
        target: flags.target,
      });
    });
    const d = result.descriptor;
    const attempt = d.attempt as JsonObject;
    const task = d.task as JsonObject;
    this.log(
      `claimed task ${shown(task.task_id)} attempt ${shown(attempt.attempt_id)} (fence ${shown(attempt.fence)}) ` +
        `for collection`,
    );
    this.log(`  descriptor written to ${flags.out}; upload request ${shown(d.upload_request_id)}`);
    for (const line of instantLines(d)) this.log(`  ${line}`);
    return result;
  }
}
