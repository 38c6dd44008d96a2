import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { buildDepsImage, type DepsBuildResult } from '../../collector/deps-image.js';
import { DockerClient } from '../../collector/docker-client.js';
import { createUnixSocketTransport } from '../../collector/docker-transport.js';
import { DEFAULT_DOCKER_SOCKET } from '../check/_shared.js';

export default class DepsBuild extends BaseCommand {
  static override summary = "Build a check's dependency image: the lockfile's node_modules on top of a base image.";
  static override description =
    "Runs the host's npm ci --ignore-scripts for the lockfile in a private temporary directory, then builds a " +
    'local image FROM the base image (never pulled) with that node_modules at /node_modules, through the Docker ' +
    'Engine API. The image is tagged agentscm-deps:LOCK-BASE by the lockfile SHA-256 and the base image ID, and ' +
    "the project's reference agentscm-deps/NAME:npm (what check add --deps npm names) is moved onto it. The same " +
    'lockfile on the same base reuses the image without running npm. A lockfile with install scripts is refused ' +
    'unless --allow-scripts says you trust those packages. See docs/deps.md.';
  static override examples = [
    '<%= config.bin %> deps build --lockfile package-lock.json --image local/node:20',
    '<%= config.bin %> deps build --lockfile package-lock.json --image local/node:20 --allow-scripts --json',
  ];
  static override flags = {
    lockfile: Flags.string({
      description: 'The npm lockfile (package.json beside it), relative to --workspace.',
      default: 'package-lock.json',
      helpValue: 'PATH',
    }),
    image: Flags.string({ description: 'Base image reference present in the engine (never pulled).', required: true }),
    workspace: Flags.string({ description: 'Project directory (default: the current directory).', helpValue: 'DIR' }),
    'allow-scripts': Flags.boolean({
      description: "Run the packages' install scripts (you trust every package in the lockfile).",
      default: false,
    }),
    'docker-socket': Flags.string({
      description: 'Docker Engine socket.',
      default: DEFAULT_DOCKER_SOCKET,
      helpValue: 'PATH',
    }),
  };

  async run(): Promise<DepsBuildResult> {
    const { flags } = await this.parse(DepsBuild);
    const transport = createUnixSocketTransport(flags['docker-socket']);
    let client: DockerClient;
    try {
      client = await DockerClient.connect(transport);
    } catch (error) {
      await transport.close();
      throw error;
    }
    let result: DepsBuildResult;
    try {
      result = await buildDepsImage(client, {
        lockfile: flags.lockfile,
        workspace: flags.workspace,
        image: flags.image,
        allowScripts: flags['allow-scripts'],
        progress: (line) => process.stderr.write(`deps: ${line}\n`),
      });
    } finally {
      await client.close();
    }
    this.log(`${result.image_id} ${result.reference}${result.reused ? ' (reused)' : ''}`);
    this.log(`lockfile sha256 ${result.lockfile_sha256}`);
    return result;
  }
}
