import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { DEFAULT_DOCKER_SOCKET, dockerExecutable } from '../../collector/docker-path.js';
import { probeRuntime, type RuntimeProbeResult } from '../../collector/runtime-probe.js';

export default class AgentTaskRuntimeProbe extends BaseCommand {
  static override description =
    'Observe the container runtime identity a command collector would use: engine and Engine API version, OS and ' +
    'architecture, security options, cgroup version, the image ID of --image (never pulled) and the SHA-256 of ' +
    'the --docker executable (default: the first executable docker on PATH); prints the identity and its SHA-256.';

  static override examples = [
    '<%= config.bin %> agent-task runtime-probe --image local/busybox:1',
    '<%= config.bin %> agent-task runtime-probe --docker /usr/bin/docker --docker-socket /var/run/docker.sock ' +
      '--image local/busybox:1',
    '<%= config.bin %> agent-task runtime-probe --docker /usr/bin/docker --docker-socket /var/run/docker.sock ' +
      '--image local/busybox:1 --json',
  ];

  static override flags = {
    docker: Flags.string({
      description:
        'The operator-selected docker executable; hashed into the identity, never run (default: the first ' +
        'executable docker on PATH).',
      helpValue: 'PATH',
    }),
    'docker-socket': Flags.string({
      description: 'Unix socket of the Docker Engine API.',
      default: DEFAULT_DOCKER_SOCKET,
      helpValue: 'PATH',
    }),
    image: Flags.string({
      description: 'Image reference to pin by its ID; it must already be present.',
      required: true,
      helpValue: 'REF',
    }),
  };

  async run(): Promise<RuntimeProbeResult & { readonly docker: string }> {
    const { flags } = await this.parse(AgentTaskRuntimeProbe);
    const docker = dockerExecutable(flags.docker);
    const result = await probeRuntime({
      docker,
      dockerSocket: flags['docker-socket'],
      image: flags.image,
    });
    const id = result.identity;
    this.log(
      `engine ${id.engine_version} (Engine API ${id.api_version}) ${id.os}/${id.arch}, cgroup v${id.cgroup_version}`,
    );
    this.log(`security options: ${id.security_options.join(', ') || '(none)'}`);
    this.log(`image ${id.image.reference} = ${id.image.id}`);
    this.log(`executable ${docker} sha256 ${id.executable_sha256}`);
    this.log(`identity sha256 ${result.identity_sha256}`);
    return { ...result, docker };
  }
}
