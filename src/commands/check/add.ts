import { join } from 'node:path';
import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { depsReference } from '../../collector/deps-image.js';
import { withStore } from '../../tasks/store.js';
import { addCommandCheck, type CheckChangeResult } from '../../workflows/checks/checks.js';
import { buildRecipe, CHECK_DEFAULTS, type RecipeFlags } from '../../workflows/checks/recipe-flags.js';
import { locateWorkspace, workspaceDataDir } from '../../workspace/locate.js';
import { printChange } from './_print.js';
import {
  changeFlag,
  checkDepsImage,
  checkImagePresent,
  DEFAULT_DOCKER_SOCKET,
  requireWorkspaceRepository,
  scopeFlags,
} from './_shared.js';

export default class CheckAdd extends BaseCommand {
  static override summary = 'Add a command check: a recipe, a workflow step, a checkpoint and the requirement.';
  static override description =
    'Writes .agentscm-checks/NAME.runner.json (the recipe: image, argv, limits, no network), SKILL.md and ' +
    'workflow.json into the workspace, checkpoints them as the checks Change, creates the command context and ' +
    "installs the workflow as the target's requirement. Bad input changes nothing; a failed checkpoint or " +
    'install puts every file back. See docs/checks.md.';
  static override examples = [
    "<%= config.bin %> check add unit --image local/busybox:1 -- sh -c 'sh test/run.sh'",
    '<%= config.bin %> check add tests --image local/node:20 --deps npm --env TZ=UTC -- node --test',
    '<%= config.bin %> check add unit --image node:20 --timeout 90s --memory 512m --cpus 1 -- npm test --json',
  ];
  static override strict = false;
  static override args = {
    name: Args.string({ description: 'Check name (a-z, 0-9, "-", "_"; at most 63).', required: true }),
  };
  static override flags = {
    ...scopeFlags,
    ...changeFlag,
    image: Flags.string({
      description: 'Image reference present in the engine (never pulled); with --deps, the base image.',
      required: true,
    }),
    deps: Flags.string({
      description:
        'npm: run on the dependency image agentscm deps build made from the workspace lockfile ' +
        '(<workdir>/package-lock.json) on --image; sets NODE_PATH and AGENTSCM_DEPS_LOCKFILE (docs/deps.md).',
      options: ['npm'],
    }),
    env: Flags.string({
      description: 'An environment variable of the step, NAME=VALUE (repeatable; at most 128 in all).',
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'NAME=VALUE',
    }),
    timeout: Flags.string({ description: 'Timeout: 90s, 10m, 1h.', default: CHECK_DEFAULTS.timeout }),
    memory: Flags.string({ description: 'Memory limit: 512m, 2g (powers of 1024).', default: CHECK_DEFAULTS.memory }),
    cpus: Flags.string({ description: 'CPUs: 2, 0.5 (→ cpu_millis).', default: CHECK_DEFAULTS.cpus }),
    network: Flags.string({ description: 'Network: none is the only value.', default: CHECK_DEFAULTS.network }),
    workdir: Flags.string({
      description: 'Working directory relative to the revision root.',
      default: CHECK_DEFAULTS.workdir,
    }),
    toolchain: Flags.string({ description: 'Toolchain identity the context binds (default: the image reference).' }),
    environment: Flags.string({
      description: 'Environment identity the context binds.',
      default: CHECK_DEFAULTS.environment,
    }),
    'docker-socket': Flags.string({
      description: 'Docker Engine socket the image is looked up in.',
      default: DEFAULT_DOCKER_SOCKET,
      helpValue: 'PATH',
    }),
    'image-check': Flags.boolean({
      description: 'Look the image up in the engine first (--no-image-check skips it).',
      default: true,
      allowNo: true,
    }),
  };

  async run(): Promise<CheckChangeResult> {
    const { args, argv, flags } = await this.parse(CheckAdd);
    const lockfile = flags.workdir === '.' ? 'package-lock.json' : `${flags.workdir}/package-lock.json`;
    const deps = flags.deps === undefined ? undefined : { lockfile };
    const base: RecipeFlags = {
      image: flags.image,
      argv: (argv as string[]).slice(1),
      timeout: flags.timeout,
      memory: flags.memory,
      cpus: flags.cpus,
      network: flags.network,
      workdir: flags.workdir,
      toolchain: flags.toolchain ?? flags.image,
      environment: flags.environment,
      env: flags.env,
      deps,
    };
    buildRecipe(base); // every flag and bound is refused before the engine is asked
    const dataDir =
      flags['data-dir'] === undefined ? workspaceDataDir(flags.workspace) : this.resolveDataDir(flags['data-dir']);
    requireWorkspaceRepository(dataDir, flags);
    let recipe = base;
    if (deps !== undefined) {
      const dir = join(locateWorkspace(flags.workspace), flags.workdir);
      recipe = { ...base, image: depsReference(dir) };
      if (flags['image-check']) await checkDepsImage(flags.image, dir, 'package-lock.json', flags['docker-socket']);
    } else if (flags['image-check']) await checkImagePresent(flags.image, flags['docker-socket']);
    const result = withStore(dataDir, 'write', (store) =>
      addCommandCheck(
        store,
        { workspace: flags.workspace, target: flags.target, change: flags.change },
        { name: args.name, recipe },
      ),
    );
    printChange(this, 'added', result);
    return result;
  }
}
