import { resolve } from 'node:path';
import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { validateId } from '../../contracts/ids.js';
import { runServerStop } from '../../hooks/server-stop.js';
import { guardStop, type StopHookResult } from '../../hooks/stop/guard.js';
import { STOP_CLIENTS, type StopClient } from '../../hooks/stop/payload.js';
import { readStopStdin } from '../../hooks/stop/stdin.js';
import { openStore } from '../../tasks/store.js';
import { reviewFlags, runtimeFlags, withRuntime } from './_runtime.js';

export default class SkillWorkflowStop extends BaseCommand {
  static override summary =
    "Stop hook (Claude Code, Codex), server-executed: checkpoint the workspace, run the target's requirement on " +
    'that revision, block with the failures.';
  static override description =
    "Reads the client's Stop payload on stdin. Checkpoints the workspace as the Change's next version, runs " +
    "the target's installed workflow requirement on that exact revision (source paths in process, command steps " +
    'in isolated containers under --docker, default the docker on PATH, and --docker-socket, default ' +
    '/var/run/docker.sock; review ' +
    'steps through the review controller: pass --review-executable, --review-model, --review-provider-scope and ' +
    '--review-state-dir when it has review steps) and passes when the run completed. Otherwise it blocks: exit 0 ' +
    'with {"decision":"block","reason":TEXT}, where TEXT names each failing step, its exit status and the last ' +
    'lines of its output (a failed review: its outcome, reasons and first findings), and ends with one JSON line ' +
    '{"failures":[{task_id,code}],"next_action":…,"next":{"operation":"checkpoint"}}. Claude Code passes with ' +
    'nothing on stdout, Codex with {}. After 8 blocks in a row for one session the hook passes without running ' +
    'again. Malformed stdin, a bad command line or a counter error exit 1, which the client treats as ' +
    'non-blocking. Install it with `agentscm install-stop --mode stop`.';
  static override examples = [
    '<%= config.bin %> --data-dir /srv/agentscm skill-workflow stop fix-parser --workspace /repo < stop-payload.json',
    '<%= config.bin %> --data-dir /srv/agentscm skill-workflow stop fix-parser --workspace /repo --client codex ' +
      '--docker /usr/bin/docker --docker-socket /var/run/docker.sock',
  ];
  static override enableJsonFlag = false;
  static override args = {
    change: Args.string({
      description: 'Change ID the workspace is checkpointed onto ([A-Za-z0-9._-]{1,128}).',
      required: true,
    }),
  };
  static override flags = {
    workspace: Flags.string({
      description: 'Workspace directory (an initialized agentscm workspace).',
      required: true,
      helpValue: 'PATH',
    }),
    target: Flags.string({
      description: 'Target whose installed requirement is run.',
      default: 'main',
      helpValue: 'NAME',
    }),
    client: Flags.string({
      description: 'The client that runs the hook: its payload and output shapes.',
      options: [...STOP_CLIENTS],
      default: 'claude-code',
    }),
    ...runtimeFlags,
    ...reviewFlags,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SkillWorkflowStop);
    const change = validateId(args.change, 'CHANGE');
    const workspace = resolve(flags.workspace);
    const dataDir = this.resolveDataDir(flags['data-dir'], workspace);
    const payload = await readStopStdin();
    const store = openStore(dataDir, { mode: 'write' });
    let result: StopHookResult;
    try {
      result = await withRuntime(flags, (runtime, signal, reviewRuntime) =>
        guardStop({
          client: flags.client as StopClient,
          store,
          change,
          payload,
          work: () =>
            runServerStop({
              store,
              workspace,
              change,
              target: flags.target,
              signal,
              onProgress: this.progressSink,
              ...(runtime === undefined ? {} : { runtime }),
              ...(reviewRuntime === undefined ? {} : { reviewRuntime }),
            }),
        }),
      );
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
