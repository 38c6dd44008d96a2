/**
 * The observed runtime identity of the OCI backend
 * (docs/command-collector.md "Runtime identity and `runtime-probe`": a command profile pins the
 * SHA-256 of the concrete OCI backend's observed runtime identity): engine and API version, OS and
 * architecture, security options, cgroup version, the image pinned by ID, and the digest of the
 * operator-selected `--docker` executable.
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { createSha256, sha256Hex } from '../crypto/sha256.js';
import type { DockerClient, ImageInfo } from './docker-client.js';

export interface RuntimeIdentity extends JsonObject {
  version: number;
  backend: 'docker-engine-api';
  engine_version: string;
  api_version: string;
  os: string;
  arch: string;
  security_options: string[];
  cgroup_version: string;
  image: { reference: string; id: string };
  executable_sha256: string;
}

/** Largest executable hashed; a larger file is refused rather than read unbounded. */
export const MAX_EXECUTABLE_BYTES = 1024 * 1024 * 1024;

/** Check the --docker / --docker-socket pair shape: both given or neither, absolute or relative paths that exist. */
export function checkRuntimeFlags(
  docker: string | undefined,
  dockerSocket: string | undefined,
): { docker: string; dockerSocket: string } | null {
  if (docker === undefined && dockerSocket === undefined) return null;
  if (docker === undefined || dockerSocket === undefined) {
    throw new AgentscmError('RUNTIME_FLAGS_INVALID', '--docker and --docker-socket are accepted only as a pair', {
      hint: 'pass both, e.g. --docker /usr/bin/docker --docker-socket /var/run/docker.sock',
    });
  }
  if (process.platform === 'win32') {
    throw new AgentscmError('RUNTIME_UNSUPPORTED_PLATFORM', 'command execution is unavailable on this platform', {
      hint: 'run command steps on a Unix host',
    });
  }
  return { docker, dockerSocket };
}

/** SHA-256 of the executable's bytes; it must exist, be a regular file and be executable. */
export function hashExecutable(path: string): string {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new Error('not a regular file');
    accessSync(path, constants.X_OK);
    size = stat.size;
  } catch (error) {
    throw new AgentscmError(
      'RUNTIME_FLAGS_INVALID',
      `--docker ${path} is not an executable file: ${(error as Error).message}`,
      {
        hint:
          'pass the path of the docker executable the operator selected (it is hashed into the runtime ' +
          'identity, not run)',
        details: { absolute: isAbsolute(path) },
      },
    );
  }
  if (size > MAX_EXECUTABLE_BYTES) {
    throw new AgentscmError(
      'INPUT_TOO_LARGE',
      `--docker ${path} has ${size} bytes, more than the ${MAX_EXECUTABLE_BYTES} this tool hashes`,
    );
  }
  const hash = createSha256();
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(1 << 20);
    let total = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      total += read;
      if (total > MAX_EXECUTABLE_BYTES)
        throw new AgentscmError(
          'INPUT_TOO_LARGE',
          `--docker ${path} grew past ${MAX_EXECUTABLE_BYTES} bytes while it was hashed`,
        );
      hash.update(buffer.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Observe the identity of the engine behind `client` for one image (never pulled). */
export async function observeRuntimeIdentity(
  client: DockerClient,
  input: { image: string; executableSha256: string },
): Promise<{ identity: RuntimeIdentity; image: ImageInfo }> {
  const info = await client.info();
  const image = await client.inspectImage(input.image);
  const identity: RuntimeIdentity = {
    version: 1,
    backend: 'docker-engine-api',
    engine_version: client.engine.version,
    api_version: client.apiVersion,
    os: client.engine.os || info.osType,
    arch: client.engine.arch,
    security_options: [...info.securityOptions],
    cgroup_version: info.cgroupVersion,
    image: { reference: input.image, id: image.id },
    executable_sha256: input.executableSha256,
  };
  return { identity, image };
}

/** SHA-256 of the identity's canonical bytes (the value a command profile pins). */
export function runtimeIdentityDigest(identity: RuntimeIdentity): string {
  return sha256Hex(encodeCanonical(identity));
}
