import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { instantLines } from '../_times.js';
import { AgentscmError } from '../../contracts/errors.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { nextAnswerCommands, shellCommandLine } from '../../native/collector-commands.js';
import { taskStoreMode } from '../../tasks/facade.js';
import { callWithTokenFile } from '../../tasks/grant-guard.js';
import { fillTaskInput, readTaskInput } from '../../tasks/input.js';
import { withStore } from '../../tasks/store.js';
import { buildTaskRequest } from '../../tasks/task-request.js';

export default class AgentTaskCall extends BaseCommand {
  static override summary = 'Run one typed agent-task operation against the local data directory.';
  static override description =
    'The local adapter of the agent-task service: runs OPERATION (capabilities, requirements, next, ' +
    'instructions, reference, claim, heartbeat, status, cancel, reconcile, result, recovery) through the same ' +
    'facade the hub serves over HTTP and MCP. The operation runs as the actor of the live grant whose token is ' +
    'in --token-file (see `agentscm grant create`); request JSON never selects the actor, and a request naming ' +
    'another actor is refused. A request that leaves out `agent` gets the grant actor; --executor fills ' +
    '`executor` from a current registration (examples/agent-tasks/ holds one body per operation). The grant is ' +
    'rechecked inside every transition, so a revoked or rotated grant changes nothing. Requests are strict JSON ' +
    '(--input FILE, or - for stdin); the answer is one JSON document. When next answers collector_claim for a ' +
    'profile set up with `agent-task collector add`, the exact claim and collect command lines follow it ' +
    '(`$ agentscm …`, as `agentscm qualification --token-file` prints them; not in --json).';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task call capabilities --token-file ' +
      '~/.agentscm/alice.token --json',
    '<%= config.bin %> agent-task call next --token-file ./alice.token --change fix-parser --context 5f3c…e2 --json',
    '<%= config.bin %> agent-task call claim --token-file ./alice.token --change fix-parser --context 5f3c…e2 ' +
      '--input claim.json --json',
    'cat heartbeat.json | <%= config.bin %> agent-task call heartbeat --token-file ./alice.token --input - --json',
    '<%= config.bin %> agent-task call cancel --token-file ./alice.token --task t-05d7… --reason "stopped early"',
    '<%= config.bin %> agent-task call reconcile --token-file ./alice.token --task t-05d7… --reason "it stopped"',
    '<%= config.bin %> agent-task call claim --token-file ./alice.token --change fix-parser --context 5f3c…e2 ' +
      '--executor reg-0f3a… --input claim.json --json',
  ];
  static override args = {
    operation: Args.string({ description: 'Operation name (see capabilities).', required: true }),
  };
  static override flags = {
    'token-file': Flags.string({
      description: 'Token file of the grant to act under (written by `grant create` or `grant rotate`; mode 0600).',
      required: true,
      helpValue: 'FILE',
    }),
    profile: Flags.string({ description: 'Workflow task profile id.', default: 'default', helpValue: 'ID' }),
    target: Flags.string({
      description: 'Protected target whose installed requirement the tasks come from.',
      default: 'main',
      helpValue: 'NAME',
    }),
    repository: Flags.string({
      description: "Repository ID or name; it must be the grant's (default: the grant's repository).",
      helpValue: 'ID_OR_NAME',
    }),
    change: Flags.string({
      description:
        'Change id of the subject (requirements, next; claim, instructions and reference of a task not yet retained).',
      helpValue: 'ID',
    }),
    context: Flags.string({
      description:
        "Digest (or unique prefix) of the review context of the Change's current version (with --change; default: " +
        'the only one at the current policy epoch).',
      helpValue: 'DIGEST',
      dependsOn: ['change'],
    }),
    input: Flags.string({ description: 'Request JSON file, or - for stdin.', helpValue: 'FILE|-' }),
    executor: Flags.string({
      description:
        "Fill the request's executor binding from this current registration (claim, heartbeat, cancel, " +
        'reconcile, result, recovery); an omitted agent is always filled from the grant.',
      helpValue: 'REGISTRATION_ID',
    }),
    task: Flags.string({
      description:
        "heartbeat, cancel, reconcile: build the request from this task's current attempt instead of --input " +
        "(fresh request id, the grant's actor, the attempt's executor and fence).",
      exclusive: ['input', 'executor'],
      helpValue: 'ID',
    }),
    reason: Flags.string({
      description: 'With --task: the reason of a cancel or reconcile (at most 1024 bytes).',
      helpValue: 'TEXT',
    }),
  };

  async run(): Promise<JsonValue> {
    const { args, flags } = await this.parse(AgentTaskCall);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const read = flags.input === undefined ? null : readTaskInput(flags.input);
    const taskId = flags.task;
    if (flags.reason !== undefined && taskId === undefined) {
      throw new AgentscmError('USAGE', '--reason goes with --task', {
        hint: 'pass --task ID, or put "reason" in --input',
      });
    }
    const { result, commands } = withStore(dataDir, taskStoreMode(args.operation), (store) => {
      const input =
        taskId === undefined
          ? fillTaskInput({
              store,
              tokenFile: flags['token-file'],
              operation: args.operation,
              input: read,
              repository: flags.repository,
              executor: flags.executor,
            })
          : buildTaskRequest({
              store,
              tokenFile: flags['token-file'],
              operation: args.operation,
              taskId,
              reason: flags.reason,
              repository: flags.repository,
            });
      const answer = callWithTokenFile({
        store,
        tokenFile: flags['token-file'],
        operation: args.operation,
        input,
        repository: flags.repository,
        profile: flags.profile,
        target: flags.target,
        subject: flags.change === undefined ? undefined : { change_id: flags.change, context_digest: flags.context },
      });
      // next's collector_claim: the exact claim and collect lines, as qualification --token-file prints them.
      const lines = args.operation === 'next' ? nextAnswerCommands(store, answer, flags['token-file']) : [];
      return { result: answer, commands: lines };
    });
    this.log(formatJson(result));
    for (const line of instantLines(result)) this.log(line);
    for (const argv of commands) this.log(`$ ${shellCommandLine(argv)}`);
    return result;
  }
}
