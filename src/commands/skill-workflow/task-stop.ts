import { resolve } from 'node:path';
import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { validateId } from '../../contracts/ids.js';
import { guardStop, type StopHookResult } from '../../hooks/stop/guard.js';
import type { StopClient } from '../../hooks/stop/payload.js';
import { readStopStdin } from '../../hooks/stop/stdin.js';
import { checkTaskStopTarget, DEFAULT_TASK_STOP_TARGET } from '../../hooks/stop/target.js';
import { runTaskStop } from '../../hooks/task-stop.js';
import { openAuthorityReadStore } from '../../native/store-handle.js';

export default class SkillWorkflowTaskStop extends BaseCommand {
  static override summary =
    'Stop hook for Claude Code, agent-owned: pass only when the hub qualifies exactly the checkpointed, clean ' +
    'workspace.';
  static override description =
    "Reads the Claude Code Stop payload on stdin. Reads the Change's subject (current version, revision, review " +
    'context, installed requirement of --target, default main: the target the hub profile pins) from the local ' +
    "store and the workspace, both read-only; asks the hub's qualification for that subject with the token of " +
    '--token-file (30 s); reads both again. Passes (exit 0, nothing on stdout) only when the answer is qualified ' +
    'and current for exactly the local revision and the workspace is clean at that revision throughout. ' +
    'Otherwise it blocks: exit 0 with {"decision":"block","reason":TEXT}, TEXT ending with one JSON line ' +
    '{"failures":[{task_id,code}],"next_action":…,"next":{operation[,task_id]}}. It never claims, collects, ' +
    'uploads, finalizes, reconciles or checkpoints, and writes nothing but its continuation counter. After 8 ' +
    'blocks in a row for one session it passes without asking. Malformed stdin, a bad command line or a counter ' +
    'error exit 1 (non-blocking). Install it with `agentscm install-stop --mode task-stop`.';
  static override examples = [
    '<%= config.bin %> --data-dir /srv/agentscm skill-workflow task-stop fix-parser --endpoint ' +
      'http://127.0.0.1:8787 --repository acme/widgets --profile default --token-file ' +
      '/home/me/.config/agentscm/agent.token --workspace /repo < stop-payload.json',
  ];
  static override enableJsonFlag = false;
  static override args = {
    change: Args.string({
      description: 'Change ID whose current version is the subject ([A-Za-z0-9._-]{1,128}).',
      required: true,
    }),
  };
  static override flags = {
    endpoint: Flags.string({ description: 'The hub URL (http or https).', required: true, helpValue: 'URL' }),
    repository: Flags.string({
      description: 'The repository as the hub names it, OWNER/NAME.',
      required: true,
      helpValue: 'OWNER/NAME',
    }),
    profile: Flags.string({ description: "The hub's agent task profile ID.", required: true, helpValue: 'ID' }),
    'token-file': Flags.string({
      description: 'The grant token file, as an absolute path.',
      required: true,
      helpValue: 'ABS_PATH',
    }),
    workspace: Flags.string({
      description: 'Workspace directory (an initialized agentscm workspace).',
      required: true,
      helpValue: 'PATH',
    }),
    target: Flags.string({
      description: 'The target the hub profile pins: its installed requirement is part of the local subject.',
      default: DEFAULT_TASK_STOP_TARGET,
      helpValue: 'NAME',
    }),
  };

  /** The client whose payload and output shapes this command speaks. */
  protected readonly client: StopClient = 'claude-code';

  async run(): Promise<void> {
    const { args, flags } = await this.parse(this.constructor as typeof SkillWorkflowTaskStop);
    const change = validateId(args.change, 'CHANGE');
    const target = {
      endpoint: flags.endpoint,
      repository: flags.repository,
      profile: flags.profile,
      tokenFile: flags['token-file'],
      target: flags.target,
    };
    checkTaskStopTarget(target);
    const workspace = resolve(flags.workspace);
    const dataDir = this.resolveDataDir(flags['data-dir'], workspace);
    const payload = await readStopStdin();
    const store = openAuthorityReadStore(dataDir);
    let result: StopHookResult;
    try {
      result = await guardStop({
        client: this.client,
        store,
        change,
        payload,
        work: () => runTaskStop({ store, workspace, change, ...target }),
      });
    } finally {
      store.close();
    }
    if (result.stderr !== '') process.stderr.write(result.stderr);
    process.stdout.write(result.stdout);
    process.exitCode = result.exitCode;
  }

  /** A Stop hook's own failure is exit 1: both clients treat it as non-blocking (exit 2 would block). */
  override async catch(err: unknown): Promise<void> {
    await super.catch(err);
    process.exitCode = 1;
  }
}
