/**
 * Shared wiring of the skill-workflow commands: the runtime flags (docker on PATH and the default
 * Engine socket when left out), the command collector runtime (connected only when a command step
 * runs), the review transport flags and the
 * review runtime (loaded only when they are given), SIGINT/SIGTERM as cancellation, and
 * the exit status of a run report.
 */
import { Flags } from '@oclif/core';

import { DEFAULT_DOCKER_SOCKET, findDockerOnPath } from '../../collector/docker-path.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import type { CommandStepRuntime } from '../../workflows/command-step.js';
import type { ReviewStepRuntime } from '../../workflows/review-step.js';
import type { AdvanceReport } from '../../workflows/runner.js';

export const runtimeFlags = {
  docker: Flags.string({
    description:
      'Docker executable a command step runs under; hashed into the runtime identity, never run (default: the ' +
      'first docker on PATH).',
    helpValue: 'PATH',
  }),
  'docker-socket': Flags.string({
    description: `Docker Engine API Unix socket (default: ${DEFAULT_DOCKER_SOCKET}).`,
    helpValue: 'PATH',
  }),
};

/** The operator's review transport (docs/review.md "Review steps in runs"): all four or none. */
export const reviewFlags = {
  'review-executable': Flags.string({
    description:
      'Claude Code executable that answers review steps: an absolute path to the resolved file, hashed before ' +
      'and after every call (with --review-model, --review-provider-scope and --review-state-dir; needed when a ' +
      'review step is reachable).',
    helpValue: 'PATH',
  }),
  'review-model': Flags.string({
    description: 'Model the review executable is asked for (pinned in the review identity).',
    helpValue: 'NAME',
  }),
  'review-provider-scope': Flags.string({
    description: 'Label of the provider account or organisation the review runs under (pinned in the review identity).',
    helpValue: 'ID',
  }),
  'review-state-dir': Flags.string({
    description:
      'Owner-private (0700) state directory of the review journal and working directory, outside every workspace ' +
      'and the data directory.',
    helpValue: 'DIR',
  }),
  'review-env': Flags.string({
    description:
      'Name of an environment variable passed to the review executable (repeatable); nothing else of the ' +
      'environment is passed.',
    helpValue: 'NAME',
    multiple: true,
  }),
};

type ReviewFlagValues = {
  readonly 'review-executable'?: string | undefined;
  readonly 'review-model'?: string | undefined;
  readonly 'review-provider-scope'?: string | undefined;
  readonly 'review-state-dir'?: string | undefined;
  readonly 'review-env'?: readonly string[] | undefined;
};

export const maxStepsFlag = Flags.integer({
  description: 'Execute at most this many steps in this call (1 to 32).',
  min: 1,
  max: 32,
  default: 32,
  helpValue: 'N',
});

/**
 * The docker executable and Engine socket of the command runtime: each flag as given, else the
 * first docker on PATH and the default socket (docs/skill-workflows.md "Command steps at run
 * time"). Null when --docker is left out and PATH holds no docker: a run that reaches no command
 * step needs none, and one that does is refused naming --docker (noDockerFound).
 */
export function runtimeChoice(
  flags: { readonly docker?: string | undefined; readonly 'docker-socket'?: string | undefined },
  pathEnv: string | undefined = process.env.PATH,
): { readonly docker: string; readonly dockerSocket: string } | null {
  for (const name of ['docker', 'docker-socket'] as const) {
    if (flags[name] === '')
      throw new AgentscmError('RUNTIME_FLAGS_INVALID', `--${name} needs a path, not an empty value`, {
        hint: `pass --${name} PATH, or leave it out for the default`,
      });
  }
  const docker = flags.docker ?? findDockerOnPath(pathEnv);
  if (docker === null) return null;
  return { docker, dockerSocket: flags['docker-socket'] ?? DEFAULT_DOCKER_SOCKET };
}

/** A command step reached with no docker found: the runner's refusal, saying why and naming --docker. */
function noDockerFound(error: unknown): unknown {
  if (!isAgentscmError(error) || error.code !== 'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED') return error;
  const step = (error.details as { step?: unknown } | undefined)?.step;
  return new AgentscmError(
    'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED',
    typeof step === 'string'
      ? `command runtime not configured: step "${step}" is a command step, --docker was not given and no ` +
          'executable docker is on PATH'
      : `${error.message}: no executable docker is on PATH`,
    {
      hint:
        'pass --docker PATH (and --docker-socket PATH when the Engine socket is not at ' +
        `${DEFAULT_DOCKER_SOCKET}); nothing was recorded as run for this step`,
      ...(typeof step === 'string' ? { details: { step } } : {}),
      cause: error,
    },
  );
}

/** Run `body` with the command runtime (runtimeChoice), the review runtime and a signal fired by SIGINT/SIGTERM. */
export async function withRuntime<T>(
  flags: { readonly docker?: string | undefined; readonly 'docker-socket'?: string | undefined } & ReviewFlagValues,
  body: (
    runtime: CommandStepRuntime | undefined,
    signal: AbortSignal,
    reviewRuntime: ReviewStepRuntime | undefined,
  ) => Promise<T>,
): Promise<T> {
  const choice = runtimeChoice(flags);
  const reviewNames = ['review-executable', 'review-model', 'review-provider-scope', 'review-state-dir'] as const;
  const given = reviewNames.filter((name) => flags[name] !== undefined);
  if (given.length !== 0 && given.length !== reviewNames.length) {
    throw new AgentscmError(
      'USAGE',
      `--${reviewNames.join(', --')} are accepted only together (missing: ` +
        `--${reviewNames.filter((name) => flags[name] === undefined).join(', --')})`,
      {
        hint: 'pass all four to run review steps, or none for workflows without review steps',
      },
    );
  }
  if (given.length === 0 && (flags['review-env'] ?? []).length > 0) {
    throw new AgentscmError('USAGE', '--review-env is accepted only with the review transport flags', {
      hint: 'pass --review-executable, --review-model, --review-provider-scope and --review-state-dir too',
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
  let review: (ReviewStepRuntime & { close(): void }) | undefined;
  try {
    if (choice !== null) {
      // Connected on first use: a run that reaches no command step never needs the engine.
      const { createLazyCommandStepRuntime } = await import('../../collector/command-step-runtime.js');
      handle = createLazyCommandStepRuntime(choice);
    }
    const executable = flags['review-executable'];
    const model = flags['review-model'];
    const providerScope = flags['review-provider-scope'];
    const stateDir = flags['review-state-dir'];
    if (executable !== undefined && model !== undefined && providerScope !== undefined && stateDir !== undefined) {
      // The executable is hashed and the journal opened on the first review step.
      const { createLazyReviewStepRuntime } = await import('../../collector/review/step-runtime.js');
      review = createLazyReviewStepRuntime({
        executable,
        model,
        providerScope,
        stateDir,
        envNames: flags['review-env'] ?? [],
      });
    }
    return await body(handle, controller.signal, review);
  } catch (error) {
    throw choice === null ? noDockerFound(error) : error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    review?.close();
    await handle?.close();
  }
}

/**
 * 0 while the run is running or completed (with or without omissions); 1 for failed, blocked, cancelled or a stop that
 * needs recovery.
 */
export function runExitCode(report: Pick<AdvanceReport, 'state' | 'waiting'>): 0 | 1 {
  if (report.waiting !== null) return 1;
  return report.state === 'running' || report.state === 'completed' || report.state === 'completed_with_omissions'
    ? 0
    : 1;
}
