/**
 * The container runtime side of `agentscm doctor` (docs/doctor.md "runtime"): the engine behind
 * the socket answers and speaks a supported API version (DockerClient.connect), every image an
 * installed collector profile pins is present (never pulled), and — with the operator's
 * `--docker` executable — the runtime identity observed now still has the digest each profile
 * pins (observeRuntimeIdentity, the same observation `agent-task runtime-probe` prints).
 */
import { DockerClient } from '../collector/docker-client.js';
import { createUnixSocketTransport } from '../collector/docker-transport.js';
import { hashExecutable, observeRuntimeIdentity, runtimeIdentityDigest } from '../collector/runtime-identity.js';
import {
  isInstalledCommandProfile,
  listCollectorProfiles,
  type InstalledCollectorProfile,
} from '../native/collector-profiles.js';
import type { Authority } from '../native/store.js';
import { describeError, finding, passed, type DoctorFinding } from './finding.js';

/** The engine socket when --docker-socket names none: DOCKER_HOST's unix:// path, else /var/run/docker.sock. */
export function defaultDockerSocket(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  return host !== undefined && host.startsWith('unix://') && host.length > 'unix://'.length
    ? host.slice('unix://'.length)
    : '/var/run/docker.sock';
}

export interface RuntimeCheckInput {
  readonly auth: Authority | null;
  /** The socket named by --docker-socket, or undefined (then defaultDockerSocket()). */
  readonly dockerSocket: string | undefined;
  /** The operator-selected docker executable hashed into the runtime identity (--docker). */
  readonly docker: string | undefined;
}

const START_FIX =
  'start the container engine (in a checkout: npm run runtime:start as root; else e.g. systemctl start docker), or ' +
  'pass --docker-socket PATH';

function profileName(installed: InstalledCollectorProfile): string {
  const p = installed.profile;
  return (
    `collector profile ${installed.collector_profile_id.slice(0, 12)} (profile ${p.workflow_profile}, step ` +
    `${p.step_id})`
  );
}

/** Socket, API version, pinned images and runtime identities. */
export async function checkRuntime(input: RuntimeCheckInput): Promise<DoctorFinding[]> {
  const socket = input.dockerSocket ?? defaultDockerSocket();
  const profiles = input.auth === null ? [] : listCollectorProfiles(input.auth).filter(isInstalledCommandProfile);
  const findings: DoctorFinding[] = [];
  let client: DockerClient | null = null;
  const transport = createUnixSocketTransport(socket);
  try {
    try {
      client = await DockerClient.connect(transport);
      findings.push(
        passed(
          'runtime',
          `the engine at unix://${socket} answers: engine ${client.engine.version}, API ${client.apiVersion} ` +
            `(engine ${client.engine.apiVersion})`,
        ),
      );
    } catch (error) {
      const { code, message } = describeError(error);
      // Needed only when something collects here: profiles installed, or the socket named explicitly.
      if (profiles.length > 0 || input.dockerSocket !== undefined)
        findings.push(finding('runtime', 'RUNTIME_UNAVAILABLE', `${code}: ${message}`, START_FIX));
      else
        findings.push(
          finding(
            'runtime',
            'RUNTIME_NOT_CONFIGURED',
            `no engine answers at unix://${socket} (${code}) and no collector profile is installed`,
            `nothing to do unless this machine collects; then ${START_FIX}`,
          ),
        );
    }
    if (input.auth === null) {
      findings.push(
        finding(
          'runtime.image',
          'NO_STORE',
          'pinned images were not checked: the store cannot be read',
          'fix the store findings above first',
        ),
      );
      return findings;
    }
    if (profiles.length === 0) {
      findings.push(
        finding(
          'runtime.image',
          'NO_PROFILES',
          'no command collector profile is installed, so no image is pinned',
          'nothing to do until an operator installs one (agentscm agent-task profile install)',
        ),
      );
      return findings;
    }
    if (client === null) {
      findings.push(
        finding(
          'runtime.image',
          'RUNTIME_DOWN',
          'pinned images and runtime identities were not checked: the engine does not answer',
          START_FIX,
        ),
      );
      return findings;
    }
    const present = new Map<string, boolean>();
    for (const image of new Set(profiles.map((p) => p.profile.recipe.image))) {
      const users = profiles.filter((p) => p.profile.recipe.image === image).length;
      try {
        const info = await client.inspectImage(image);
        present.set(image, true);
        findings.push(
          passed(
            'runtime.image',
            `image ${image} (${info.id}) is present, pinned by ${users} collector profile${users === 1 ? '' : 's'}`,
          ),
        );
      } catch (error) {
        present.set(image, false);
        const { code, message } = describeError(error);
        findings.push(
          finding(
            'runtime.image',
            'IMAGE_MISSING',
            `image ${image}, pinned by ${users} collector profile${users === 1 ? '' : 's'}, cannot be used: ` +
              `${code}: ${message}`,
            `load the image into the engine (docker load -i FILE, or docker build -t ${image} …); agentscm never ` +
              'pulls images',
          ),
        );
      }
    }
    if (input.docker === undefined) {
      findings.push(
        finding(
          'runtime.identity',
          'NO_DOCKER_EXECUTABLE',
          'runtime identities were not compared: the identity includes the digest of the operator-selected docker ' +
            'executable',
          'pass --docker PATH (the executable the profiles were probed with) to compare them',
        ),
      );
      return findings;
    }
    let executableSha256: string;
    try {
      executableSha256 = hashExecutable(input.docker);
    } catch (error) {
      const { code, message } = describeError(error);
      findings.push(
        finding(
          'runtime.identity',
          'RUNTIME_EXECUTABLE_INVALID',
          `${code}: ${message}`,
          'pass --docker with the path of an executable file',
        ),
      );
      return findings;
    }
    const digests = new Map<string, string>();
    for (const installed of profiles) {
      const image = installed.profile.recipe.image;
      if (present.get(image) !== true) continue;
      let digest = digests.get(image);
      if (digest === undefined) {
        try {
          digest = runtimeIdentityDigest((await observeRuntimeIdentity(client, { image, executableSha256 })).identity);
        } catch (error) {
          const { code, message } = describeError(error);
          findings.push(
            finding(
              'runtime.identity',
              'RUNTIME_UNAVAILABLE',
              `the runtime identity for ${image} cannot be observed: ${code}: ${message}`,
              START_FIX,
            ),
          );
          return findings;
        }
        digests.set(image, digest);
      }
      if (digest === installed.profile.runtime_identity_digest) {
        findings.push(
          passed(
            'runtime.identity',
            `${profileName(installed)}: the runtime identity observed now is the pinned one (${digest.slice(0, 16)}…)`,
          ),
        );
      } else {
        findings.push(
          finding(
            'runtime.identity',
            'RUNTIME_IDENTITY_CHANGED',
            `${profileName(installed)} pins runtime identity ${installed.profile.runtime_identity_digest}, but the ` +
              `engine, image and executable observed now give ${digest}; records it collects are refused`,
            `probe the runtime (agentscm agent-task runtime-probe --docker ${input.docker} --docker-socket ` +
              `${socket} --image ${image}) and install a new collector profile pinning its identity_sha256, or ` +
              'restore the engine, image and executable the profile pinned',
          ),
        );
      }
    }
    return findings;
  } finally {
    if (client !== null) await client.close();
    else await transport.close();
  }
}
