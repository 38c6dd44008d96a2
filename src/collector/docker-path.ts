/**
 * The docker executable a command that takes `--docker` uses when the flag is left out: the first
 * `docker` on PATH that is an executable regular file (as a shell would find it), made absolute.
 * The executable is only hashed into the runtime identity, never run; naming it in the printed
 * identity lets an operator see which one was chosen.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';

/** The default socket of the Docker Engine API. */
export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable regular file `docker` in the directories of `pathEnv`, or null. */
export function findDockerOnPath(pathEnv: string | undefined): string | null {
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    // An empty or relative PATH entry names the working directory: never trusted for an executable.
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, 'docker');
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * `--docker` as given (made absolute), else the docker found on PATH; RUNTIME_FLAGS_INVALID when
 * the flag is empty or PATH has none.
 */
export function dockerExecutable(flag: string | undefined, pathEnv: string | undefined = process.env.PATH): string {
  if (flag !== undefined) {
    if (flag === '')
      throw new AgentscmError('RUNTIME_FLAGS_INVALID', '--docker needs a path, not an empty value', {
        hint: 'pass --docker PATH, or leave it out to use the docker found on PATH',
      });
    return resolve(flag);
  }
  const found = findDockerOnPath(pathEnv);
  if (found === null)
    throw new AgentscmError('RUNTIME_FLAGS_INVALID', 'no executable docker was found on PATH', {
      hint: 'pass --docker PATH with the docker executable the collector will use (it is hashed, never run)',
    });
  return found;
}
