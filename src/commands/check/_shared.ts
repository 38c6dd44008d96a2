/**
 * Flags every `check` command shares, and the image lookup `check add` does before anything is
 * written (docs/checks.md "Unknown images"): the Docker Engine answers whether the image is
 * present; agentscm never pulls.
 */
import { Flags } from '@oclif/core';

import { workspaceRepositoryFlag } from '../_bound-repository.js';
import { requireDepsImage } from '../../collector/deps-image.js';
import { DockerClient } from '../../collector/docker-client.js';
import { createUnixSocketTransport } from '../../collector/docker-transport.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';
import { DEFAULT_CHECKS_CHANGE, DEFAULT_CHECKS_TARGET } from '../../workflows/checks/checks.js';

export { requireWorkspaceRepository } from '../_bound-repository.js';

export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

export const scopeFlags = {
  workspace: Flags.string({
    description: 'Workspace directory (default: the nearest one at or above the current directory).',
    helpValue: 'PATH',
  }),
  target: Flags.string({
    description: 'Protected target whose requirement the checks are.',
    default: DEFAULT_CHECKS_TARGET,
    helpValue: 'NAME',
  }),
  repository: workspaceRepositoryFlag,
};

export const changeFlag = {
  change: Flags.string({
    description: 'Change the check files are checkpointed as (^[A-Za-z0-9._-]{1,128}$).',
    default: DEFAULT_CHECKS_CHANGE,
    helpValue: 'ID',
  }),
};

/** Refuse an image the engine does not have; an engine that does not answer is refused too. */
export async function checkImagePresent(image: string, socket: string): Promise<void> {
  await withEngine(image, socket, async (client) => {
    await client.inspectImage(image);
  });
}

/** `--deps npm`: the dependency image of the lockfile in `dir`, built on `base` (docs/deps.md). */
export async function checkDepsImage(
  base: string,
  dir: string,
  lockfile: string,
  socket: string,
): Promise<{ reference: string; lockfile_sha256: string }> {
  return withEngine(base, socket, (client) => requireDepsImage(client, { dir, lockfile, base }));
}

async function withEngine<T>(image: string, socket: string, body: (client: DockerClient) => Promise<T>): Promise<T> {
  const transport = createUnixSocketTransport(socket);
  let client: DockerClient;
  try {
    client = await DockerClient.connect(transport);
  } catch (error) {
    await transport.close();
    if (!isAgentscmError(error) && !(error instanceof Error)) throw error;
    throw new AgentscmError(
      'RUNTIME_UNAVAILABLE',
      `no Docker Engine answers at ${socket} to confirm the image ${image} exists`,
      {
        hint: 'start the engine, name its socket with --docker-socket, or skip the lookup with --no-image-check',
        cause: error,
      },
    );
  }
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}
