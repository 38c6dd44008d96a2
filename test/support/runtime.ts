/**
 * The container runtime every test and benchmark that runs a real container uses: the project's
 * own Docker Engine (bin/start-runtime.sh; AGENTSCM_TEST_DOCKER_SOCKET overrides its socket) and
 * the busybox image it imports. The docker executable is only hashed into the runtime identity,
 * never run, so any fixed file serves.
 */
import { join } from 'node:path';

export const DOCKER_SOCKET = process.env.AGENTSCM_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
export const DOCKER_EXE = '/bin/true';
export const IMAGE = 'local/busybox:1';
/** The runtime flags of `skill-workflow run`, `agent-task collect` and `agent-task runtime-probe`. */
export const RUNTIME_FLAGS: readonly string[] = ['--docker', DOCKER_EXE, '--docker-socket', DOCKER_SOCKET];

/**
 * The environment of a command that must find no `docker` on PATH (so that leaving out --docker
 * leaves it without a runtime): PATH is one directory that does not exist.
 */
export function noDockerOnPath(dir: string): { PATH: string } {
  return { PATH: join(dir, 'no-docker-on-path') };
}
