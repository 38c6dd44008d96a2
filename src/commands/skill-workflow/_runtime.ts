/**
 * Shared wiring of the skill-workflow commands: the trusted runtime flag pair, the command
 * collector runtime (loaded only when the pair is given), SIGINT/SIGTERM as cancellation, and
 * the exit status of a run report.
 */
import { Flags } from '@oclif/core';
import { AgentscmError } from '../../contracts/errors.js';
import type { CommandStepRuntime } from '../../workflows/command-step.js';
import type { AdvanceReport } from '../../workflows/runner.js';

export const runtimeFlags = {
  docker: Flags.string({
    description: 'Docker executable selected by the operator (with --docker-socket; needed when a command step is reachable).',
    helpValue: 'PATH',
  }),
  'docker-socket': Flags.string({
    description: 'Docker Engine API Unix socket (with --docker).',
    helpValue: 'PATH',
  }),
};

export const maxStepsFlag = Flags.integer({
  description: 'Execute at most this many steps in this call (1 to 32).',
  min: 1,
  max: 32,
  default: 32,
  helpValue: 'N',
});

/** Run `body` with the runtime of the flag pair (if given) and a signal fired by SIGINT/SIGTERM. */
export async function withRuntime<T>(
  flags: { readonly docker?: string | undefined; readonly 'docker-socket'?: string | undefined },
  body: (runtime: CommandStepRuntime | undefined, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if ((flags.docker === undefined) !== (flags['docker-socket'] === undefined)) {
    throw new AgentscmError('USAGE', '--docker and --docker-socket are accepted only as a pair', {
      hint: 'pass both, e.g. --docker /usr/local/bin/docker --docker-socket /var/run/docker.sock, or neither for source-only workflows',
    });
  }
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`received ${signal}: stopping after the current step and asking a running command to stop\n`);
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let handle: (CommandStepRuntime & { close(): Promise<void> }) | undefined;
  try {
    if (flags.docker !== undefined && flags['docker-socket'] !== undefined) {
      // Connected on first use: a run that reaches no command step never needs the engine.
      const { createLazyCommandStepRuntime } = await import('../../collector/command-step-runtime.js');
      handle = createLazyCommandStepRuntime({ docker: flags.docker, dockerSocket: flags['docker-socket'] });
    }
    return await body(handle, controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await handle?.close();
  }
}

/** 0 while the run is running or completed (with or without omissions); 1 for failed, blocked, cancelled or a stop that needs recovery. */
export function runExitCode(report: Pick<AdvanceReport, 'state' | 'waiting'>): 0 | 1 {
  if (report.waiting !== null) return 1;
  return report.state === 'running' || report.state === 'completed' || report.state === 'completed_with_omissions' ? 0 : 1;
}
