import { Args, Flags } from '@oclif/core';
import { formatJson } from '../../contracts/canonical-json.js';
import type { JsonValue } from '../../contracts/json-value.js';
import { trustedLocalGuard } from '../../tasks/context.js';
import { callTaskOperation } from '../../tasks/facade.js';
import { parseActor, readTaskInput } from '../../tasks/input.js';
import { BaseCommand } from '../_base.js';

export default class AgentTaskCall extends BaseCommand {
  static override summary = 'Run one typed agent-task operation against the local data directory.';
  static override description =
    'The trusted-local adapter of the agent-task service: runs OPERATION (capabilities, requirements, next, instructions, reference, claim, heartbeat, status, cancel, reconcile, result, recovery) through the same facade the hub serves over HTTP and MCP. The local OS account is trusted, so the --actor given is accepted as authenticated. Requests are strict JSON (--input FILE, or - for stdin); the answer is one JSON document.';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task call capabilities --actor alice/claude-1 --json',
    '<%= config.bin %> agent-task call next --actor alice/claude-1 --change fix-parser --context 5f3c…e2 --json',
    '<%= config.bin %> agent-task call claim --actor alice/claude-1 --change fix-parser --context 5f3c…e2 --input claim.json --json',
    'cat heartbeat.json | <%= config.bin %> agent-task call heartbeat --actor alice/claude-1 --input - --json',
  ];
  static override args = {
    operation: Args.string({ description: 'Operation name (see capabilities).', required: true }),
  };
  static override flags = {
    actor: Flags.string({ description: 'The authenticated actor, OWNER/AGENT (trusted locally).', required: true, helpValue: 'OWNER/AGENT' }),
    profile: Flags.string({ description: 'Workflow task profile id.', default: 'default', helpValue: 'ID' }),
    target: Flags.string({ description: 'Protected target whose installed requirement the tasks come from.', default: 'main', helpValue: 'NAME' }),
    repository: Flags.string({ description: 'Repository ID or name (default: the only repository of the store).', helpValue: 'ID_OR_NAME' }),
    change: Flags.string({ description: 'Change id of the subject (requirements, next; claim, instructions and reference of a task not yet retained).', helpValue: 'ID', dependsOn: ['context'] }),
    context: Flags.string({ description: 'Digest of the review context of the Change\'s current version (with --change).', helpValue: 'DIGEST', dependsOn: ['change'] }),
    input: Flags.string({ description: 'Request JSON file, or - for stdin.', helpValue: 'FILE|-' }),
  };

  async run(): Promise<JsonValue> {
    const { args, flags } = await this.parse(AgentTaskCall);
    const result = callTaskOperation(
      {
        dataDir: this.resolveDataDir(flags['data-dir']),
        actor: parseActor(flags.actor),
        repository: flags.repository,
        profile: flags.profile,
        target: flags.target,
        subject: flags.change === undefined || flags.context === undefined ? undefined : { change_id: flags.change, context_digest: flags.context },
        guard: trustedLocalGuard,
      },
      args.operation,
      flags.input === undefined ? null : readTaskInput(flags.input),
    );
    this.log(formatJson(result));
    return result;
  }
}
