/**
 * The command collector behind the workflow runner's CommandStepRuntime seam
 * (src/workflows/command-step.ts). `createCommandStepRuntime` validates the trusted runtime
 * pair (the executable exists and is hashed into the runtime identity; the socket answers);
 * its `run` is command-step-run.ts: a durable attempt reserved before any container exists,
 * never run again.
 */

import { AgentscmError } from '../contracts/errors.js';
import type { CommandStepRuntime } from '../workflows/command-step.js';
import { preflightCommandStep, runCommandStep } from './command-step-run.js';
import { cancelCommandStep, stopCommandStep } from './custody.js';
import { DockerClient } from './docker-client.js';
import { createUnixSocketTransport, type DockerTransport } from './docker-transport.js';
import { cachedExecutableHash } from './executable-hash-cache.js';
import { checkRuntimeFlags, hashExecutable } from './runtime-identity.js';

export interface CommandRuntimeOptions {
  readonly docker: string;
  readonly dockerSocket: string;
  /** Replaces the Unix-socket transport (fault injection in tests). */
  readonly transport?: DockerTransport;
  /** How long to wait for output after the container stopped (default 2 s). */
  readonly drainMs?: number;
  /** How long the engine may take to report a stop after a timeout or kill (default 30 s). */
  readonly graceMs?: number;
  /** A collector state directory that keeps the executable's hash (executable-hash-cache.ts). */
  readonly hashCacheDir?: string;
}

export interface CommandRuntimeHandle extends CommandStepRuntime {
  readonly client: DockerClient;
  readonly executableSha256: string;
  close(): Promise<void>;
}

/** Connect to the engine behind a validated --docker / --docker-socket pair. */
export async function connectRuntime(
  options: CommandRuntimeOptions,
): Promise<{ client: DockerClient; executableSha256: string }> {
  const flags = checkRuntimeFlags(options.docker, options.dockerSocket);
  if (flags === null)
    throw new AgentscmError('RUNTIME_FLAGS_INVALID', 'command execution needs --docker and --docker-socket');
  const executableSha256 =
    options.hashCacheDir === undefined
      ? hashExecutable(flags.docker)
      : cachedExecutableHash(flags.docker, options.hashCacheDir);
  const transport = options.transport ?? createUnixSocketTransport(flags.dockerSocket);
  try {
    return { client: await DockerClient.connect(transport), executableSha256 };
  } catch (error) {
    await transport.close();
    throw error;
  }
}

/** The CommandStepRuntime the workflow commands wire into the runner. */
export async function createCommandStepRuntime(options: CommandRuntimeOptions): Promise<CommandRuntimeHandle> {
  const { client, executableSha256 } = await connectRuntime(options);
  return {
    client,
    executableSha256,
    preflight: (request) => preflightCommandStep(client, request),
    run: (request) =>
      runCommandStep({ client, executableSha256, drainMs: options.drainMs, graceMs: options.graceMs }, request),
    cancel: (request) => cancelCommandStep(client, request),
    stop: (request) => stopCommandStep(client, request),
    close: () => client.close(),
  };
}

/**
 * The runtime the workflow commands use: the flag pair and the executable are validated now
 * (RUNTIME_FLAGS_INVALID), the engine is connected on first use only, so a run that never
 * reaches a command step never needs the engine to answer.
 */
export function createLazyCommandStepRuntime(
  options: CommandRuntimeOptions,
): CommandStepRuntime & { close(): Promise<void> } {
  const flags = checkRuntimeFlags(options.docker, options.dockerSocket);
  if (flags === null)
    throw new AgentscmError('RUNTIME_FLAGS_INVALID', 'command execution needs --docker and --docker-socket');
  hashExecutable(flags.docker);
  let opened: Promise<CommandRuntimeHandle> | null = null;
  const open = (): Promise<CommandRuntimeHandle> => (opened ??= createCommandStepRuntime(options));
  return {
    preflight: async (request) => (await open()).preflight?.(request),
    run: async (request) => (await open()).run(request),
    cancel: async (request) => {
      const handle = await open();
      if (handle.cancel === undefined)
        throw new AgentscmError('INTERNAL', 'the command runtime offers no cancellation');
      return handle.cancel(request);
    },
    stop: async (request) => (await open()).stop?.(request) ?? 0,
    close: async () => {
      if (opened === null) return;
      try {
        await (await opened).close();
      } catch {
        // A connection that never opened has nothing to close.
      }
    },
  };
}
