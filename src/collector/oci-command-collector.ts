/**
 * Run one recipe in an isolated container through the Engine API (issue 4 "Execution"):
 * network none, read-only root filesystem, every capability dropped, no-new-privileges, a
 * non-root user, pids / memory (no swap) / CPU limits, an exec tmpfs for scratch (the only
 * writable place, sized by the recipe, HOME and TMPDIR; no /dev/shm), the revision mounted
 * read-only at /src, labels carrying the attempt for custody. Output is demultiplexed
 * and bounded; exit code, OOM kill and timings are observed; the container is removed and its
 * removal confirmed. Anything the engine could not confirm makes the outcome uncertain.
 */
import { containerWorkdir, SOURCE_MOUNT, type CommandRecipe } from '../contracts/collector/command-recipe.js';
import { isAgentscmError } from '../contracts/errors.js';
import type { DockerClient } from './docker-client.js';
import { OutputCapture, type CapturedStream } from './output-capture.js';

/** How long the engine may take to report the container stopped after a timeout or kill. */
export const WAIT_GRACE_MS = 30_000;

/** The uid:gid every command runs as (the image's "nobody"); never root. */
export const CONTAINER_USER = '65534:65534';

/** The scratch tmpfs: the container's only writable place, and HOME and TMPDIR. */
export const SCRATCH_MOUNT = '/tmp';

/** Mount options of the scratch tmpfs: exec, sized by the recipe's scratch budget. */
export function scratchMountOptions(scratchBytes: number): string {
  return `rw,exec,nosuid,nodev,mode=1777,size=${scratchBytes}`;
}

/** Labels that carry custody of an attempt's container. */
export const LABELS = {
  managed: 'io.agentscm.managed',
  attempt: 'io.agentscm.attempt',
  run: 'io.agentscm.run',
  step: 'io.agentscm.step',
} as const;

export type ExecutionOutcome =
  | 'passed'
  | 'failed'
  | 'timed_out'
  | 'oom_killed'
  | 'output_limit'
  | 'cancelled'
  | 'runtime_error'
  | 'uncertain'
  | 'interrupted';

export type ContainerCleanup = 'removed' | 'not_created' | 'unconfirmed';

export interface ContainerRunInput {
  readonly client: DockerClient;
  readonly containerName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly recipe: CommandRecipe;
  readonly imageId: string;
  readonly snapshotPath: string;
  readonly signal?: AbortSignal;
  /**
   * Whether the attempt was cancelled from another process (`skill-workflow cancel`), which
   * stops the container by its custody label: asked before the create (nothing is created) and
   * when a stop this collector did not send is seen (the outcome is then `cancelled`, not
   * `uncertain`).
   */
  readonly cancelRequested?: () => boolean;
  /** Called (synchronously) as soon as the engine names the container, before it starts. */
  readonly onCreated?: (containerId: string) => void;
  /** How long to wait for the output stream to drain after the container stopped. */
  readonly drainMs?: number;
  /** How long the engine may take to report a stop after the timeout or a kill (default 30 s). */
  readonly graceMs?: number;
}

export interface ContainerRunObservation {
  readonly outcome: ExecutionOutcome;
  readonly containerId: string | null;
  readonly exitCode: number | null;
  readonly oomKilled: boolean;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly outputLimited: boolean;
  readonly stdout: CapturedStream;
  readonly stderr: CapturedStream;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly durationMs: number;
  readonly containerCleanup: ContainerCleanup;
  /** What went wrong outside the command itself (engine errors), bounded. */
  readonly error: string | null;
}

/** The Engine API create body for a recipe (exported for the tests of the isolation settings). */
export function containerSpec(input: {
  recipe: CommandRecipe;
  imageId: string;
  snapshotPath: string;
  labels: Readonly<Record<string, string>>;
}): Record<string, unknown> {
  const { recipe } = input;
  // HOME and TMPDIR point into scratch unless the recipe names them itself: test runners and
  // compilers write caches and executables there, and scratch is the only writable place.
  const vars: Record<string, string> = { HOME: SCRATCH_MOUNT, TMPDIR: SCRATCH_MOUNT, ...recipe.env };
  const env = Object.keys(vars)
    .sort()
    .map((key) => `${key}=${vars[key] ?? ''}`);
  return {
    Image: input.imageId,
    // The argv runs as given: the entrypoint is argv[0], so no image CMD or shell is added.
    Entrypoint: [recipe.argv[0]],
    Cmd: recipe.argv.slice(1),
    Env: env,
    WorkingDir: containerWorkdir(recipe),
    User: CONTAINER_USER,
    Labels: { ...input.labels },
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: false,
    Tty: false,
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      PidsLimit: recipe.limits.pids,
      Memory: recipe.limits.memory_bytes,
      MemorySwap: recipe.limits.memory_bytes,
      NanoCpus: recipe.limits.cpu_millis * 1_000_000,
      // Scratch is exec (Docker adds noexec to a tmpfs unless told otherwise): a suite must be
      // able to run what it builds. Its size is the recipe's whole writable budget.
      Tmpfs: { [SCRATCH_MOUNT]: scratchMountOptions(recipe.limits.scratch_bytes) },
      Mounts: [
        {
          Type: 'bind',
          Source: input.snapshotPath,
          Target: SOURCE_MOUNT,
          ReadOnly: true,
          BindOptions: { Propagation: 'rprivate' },
        },
      ],
      // A private IPC namespace with no /dev/shm: a shm mount would be a second writable tmpfs
      // (64 MiB by default) outside scratch_bytes. POSIX message queues (/dev/mqueue, mode
      // 1777) would be a third; an RLIMIT_MSGQUEUE of 0 makes creating one fail.
      IpcMode: 'none',
      Ulimits: [{ Name: 'msgqueue', Soft: 0, Hard: 0 }],
      LogConfig: { Type: 'none', Config: {} },
      RestartPolicy: { Name: 'no' },
      AutoRemove: false,
    },
  };
}

function describeError(error: unknown): string {
  const text = isAgentscmError(error)
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
  return text.slice(0, 1024);
}

function lostEngine(error: unknown): boolean {
  return !isAgentscmError(error) || error.code === 'RUNTIME_UNAVAILABLE';
}

/** Kill (if needed), force-remove and confirm that the container is gone. */
export async function removeAndConfirm(
  client: DockerClient,
  idOrName: string,
): Promise<{ cleanup: ContainerCleanup; error: string | null }> {
  try {
    await client.removeContainer(idOrName);
    const after = await client.inspectContainer(idOrName);
    if (after === null) return { cleanup: 'removed', error: null };
    return {
      cleanup: 'unconfirmed',
      error: `container ${idOrName.slice(0, 12)} still exists after removal (${after.status})`,
    };
  } catch (error) {
    return { cleanup: 'unconfirmed', error: describeError(error) };
  }
}

/** Run the recipe once in a fresh container and observe everything the issue asks for. */
export async function runContainer(input: ContainerRunInput): Promise<ContainerRunObservation> {
  const { client, recipe } = input;
  const capture = new OutputCapture(recipe.limits.output_bytes);
  const began = performance.now();
  const flags = { timedOut: false, cancelled: false, outputLimited: false };
  const errors: string[] = [];
  let containerId: string | null = null;
  let engineLost = false;
  let startFailed = false;

  const finish = (partial: {
    outcome: ExecutionOutcome;
    exitCode?: number | null;
    oomKilled?: boolean;
    startedAt?: string | null;
    finishedAt?: string | null;
    containerCleanup: ContainerCleanup;
  }): ContainerRunObservation => ({
    outcome: partial.outcome,
    containerId,
    exitCode: partial.exitCode ?? null,
    oomKilled: partial.oomKilled ?? false,
    timedOut: flags.timedOut,
    cancelled: flags.cancelled,
    outputLimited: flags.outputLimited,
    stdout: capture.stdout,
    stderr: capture.stderr,
    startedAt: partial.startedAt ?? null,
    finishedAt: partial.finishedAt ?? null,
    durationMs: Math.round(performance.now() - began),
    containerCleanup: partial.containerCleanup,
    error: errors.length === 0 ? null : errors.join('; ').slice(0, 2048),
  });

  if (input.signal?.aborted === true || input.cancelRequested?.() === true) {
    flags.cancelled = true;
    return finish({ outcome: 'cancelled', containerCleanup: 'not_created' });
  }

  // Events are read from just before the create, so every stop of this container is seen.
  const since = Date.now() / 1000 - 1;
  try {
    containerId = await client.createContainer(input.containerName, containerSpec(input));
  } catch (error) {
    errors.push(describeError(error));
    if (lostEngine(error) || (isAgentscmError(error, 'RUNTIME_API_ERROR') && error.details?.status === 409)) {
      // The engine may have created it before the answer was lost: look for it by name.
      const cleanup = await removeAndConfirm(client, input.containerName);
      if (cleanup.error !== null) errors.push(cleanup.error);
      return finish({ outcome: 'uncertain', containerCleanup: cleanup.cleanup });
    }
    return finish({ outcome: 'runtime_error', containerCleanup: 'not_created' });
  }
  const id = containerId;
  input.onCreated?.(id);

  // The wait has no client timeout of its own; this deadline ends it when the engine hangs:
  // the recipe timeout plus a grace, shortened to the grace once a kill was sent.
  const waitDeadline = new AbortController();
  let deadlineTimer: NodeJS.Timeout | undefined;
  const armDeadline = (ms: number): void => {
    clearTimeout(deadlineTimer);
    deadlineTimer = setTimeout(
      () => waitDeadline.abort(new Error(`the engine did not report the container stopped within ${ms} ms`)),
      ms,
    );
  };
  const killing: { promise: Promise<void> | null } = { promise: null };
  const kill = (): void => {
    if (killing.promise !== null) return;
    armDeadline(input.graceMs ?? WAIT_GRACE_MS);
    killing.promise = client.killContainer(id).catch((error: unknown) => {
      errors.push(`kill: ${describeError(error)}`);
    });
  };
  const onAbort = (): void => {
    flags.cancelled = true;
    kill();
  };
  input.signal?.addEventListener('abort', onAbort, { once: true });

  let drained: Promise<void> = Promise.resolve();
  let stream: (NodeJS.ReadableStream & { destroy(error?: Error): unknown }) | null = null;
  let timer: NodeJS.Timeout | undefined;
  let exitCode: number | null = null;
  try {
    stream = await client.attachContainer(id);
    const attached = stream;
    drained = new Promise<void>((resolve) => {
      attached.on('data', (chunk: Buffer) => {
        if (capture.push(chunk)) {
          flags.outputLimited = true;
          kill();
        }
      });
      attached.on('end', () => resolve());
      attached.on('close', () => resolve());
      attached.on('error', (error: Error) => {
        errors.push(`attach: ${error.message}`);
        resolve();
      });
    });
    if (!flags.cancelled) {
      try {
        await client.startContainer(id);
      } catch (error) {
        if (lostEngine(error)) throw error;
        startFailed = true;
        errors.push(`start: ${describeError(error)}`);
      }
    }
    if (!startFailed && !flags.cancelled) {
      timer = setTimeout(() => {
        flags.timedOut = true;
        kill();
      }, recipe.timeout_ms);
      if (killing.promise === null) armDeadline(recipe.timeout_ms + (input.graceMs ?? WAIT_GRACE_MS));
      const waited = await client.waitContainer(id, waitDeadline.signal);
      exitCode = waited.statusCode;
    }
  } catch (error) {
    engineLost = true;
    errors.push(describeError(error));
  } finally {
    clearTimeout(timer);
    clearTimeout(deadlineTimer);
    input.signal?.removeEventListener('abort', onAbort);
  }
  if (killing.promise !== null) await killing.promise;
  // The attach stream ends when the container stops; a bounded wait covers a lost engine.
  await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, input.drainMs ?? 2000).unref())]);
  stream?.destroy();

  let state = null;
  if (!engineLost) {
    try {
      state = await client.inspectContainer(id);
      if (state === null) {
        engineLost = true;
        errors.push('the container vanished before it was inspected');
      } else if (state.running) {
        // Stopped for us by nothing we know of: stop it now; the result is not trustworthy.
        engineLost = true;
        errors.push('the container was still running after the wait returned');
      }
    } catch (error) {
      engineLost = true;
      errors.push(`inspect: ${describeError(error)}`);
    }
  }
  if (!engineLost && !startFailed && !flags.cancelled) {
    // A stop nobody here asked for (engine shutdown, `docker stop`) means the command did not
    // finish on its own: whatever its exit code, the result is uncertain.
    try {
      const signals = await client.containerKillSignals(id, since, Date.now() / 1000);
      const foreign = signals.filter(
        (signal) => !(killing.promise !== null && (signal === '9' || signal === 'KILL' || signal === 'SIGKILL')),
      );
      if (foreign.length > 0 && input.cancelRequested?.() === true) {
        // The stop came from `skill-workflow cancel` in another process: a cancellation.
        flags.cancelled = true;
      } else if (foreign.length > 0) {
        engineLost = true;
        errors.push(`the container was stopped from outside the collector (signal ${foreign.join(', ')})`);
      }
    } catch (error) {
      engineLost = true;
      errors.push(`events: ${describeError(error)}`);
    }
  }
  const cleanup = await removeAndConfirm(client, id);
  if (cleanup.error !== null) errors.push(`cleanup: ${cleanup.error}`);

  const observed = {
    exitCode:
      state !== null && state.exitCode >= 0 && !startFailed
        ? state.exitCode
        : exitCode !== null && exitCode >= 0
          ? exitCode
          : null,
    oomKilled: state?.oomKilled ?? false,
    startedAt: state !== null && !state.startedAt.startsWith('0001-') ? state.startedAt : null,
    finishedAt: state !== null && !state.finishedAt.startsWith('0001-') ? state.finishedAt : null,
    containerCleanup: cleanup.cleanup,
  };
  let outcome: ExecutionOutcome;
  if (engineLost) outcome = 'uncertain';
  else if (flags.cancelled) outcome = 'cancelled';
  else if (flags.timedOut) outcome = 'timed_out';
  else if (flags.outputLimited) outcome = 'output_limit';
  else if (observed.oomKilled) outcome = 'oom_killed';
  else if (startFailed) outcome = 'runtime_error';
  else if (observed.exitCode === 0) outcome = 'passed';
  else if (observed.exitCode === null) outcome = 'uncertain';
  else outcome = 'failed';
  return finish({ outcome, ...observed });
}

/** Whether an observation may count as a success: passed, and every cleanup confirmed. */
export function isConfirmedPass(
  outcome: ExecutionOutcome,
  cleanup: { container: ContainerCleanup; snapshot: ContainerCleanup },
): boolean {
  return outcome === 'passed' && cleanup.container === 'removed' && cleanup.snapshot === 'removed';
}
