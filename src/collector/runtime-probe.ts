/**
 * `agent-task runtime-probe`: connect to the engine behind a --docker / --docker-socket pair,
 * inspect one image (never pulled) and report the observed runtime identity with its SHA-256,
 * the value an operator pins in a command collector profile.
 */
import { connectRuntime } from './command-step-runtime.js';
import type { DockerTransport } from './docker-transport.js';
import { observeRuntimeIdentity, runtimeIdentityDigest, type RuntimeIdentity } from './runtime-identity.js';

export interface RuntimeProbeResult {
  readonly identity: RuntimeIdentity;
  readonly identity_sha256: string;
  readonly socket: string;
}

export async function probeRuntime(input: {
  docker: string | undefined;
  dockerSocket: string | undefined;
  image: string;
  transport?: DockerTransport;
}): Promise<RuntimeProbeResult> {
  const { client, executableSha256 } = await connectRuntime({
    docker: input.docker ?? '',
    dockerSocket: input.dockerSocket ?? '',
    ...(input.transport === undefined ? {} : { transport: input.transport }),
  });
  try {
    const { identity } = await observeRuntimeIdentity(client, { image: input.image, executableSha256 });
    return { identity, identity_sha256: runtimeIdentityDigest(identity), socket: input.dockerSocket ?? '' };
  } finally {
    await client.close();
  }
}
