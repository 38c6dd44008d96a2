/**
 * npm for tests of projects with dependencies (docs/deps.md): one npm cache owned by the tests and
 * kept between runs, so the registry is asked once per package and later installs read the cache;
 * the dependency image `deps build` makes is reused across tests (same lockfile, same base → the
 * same image, found by its labels, npm not started).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runCli, type CliResult } from '../helpers/cli.js';
import { DOCKER_SOCKET } from './runtime.js';

/** npm's own cache, owned by the tests and kept between runs. */
export const NPM_CACHE = join(tmpdir(), 'agentscm-test-npm-cache');

/** The environment npm (and `deps build`, which runs npm) gets in tests. */
export const NPM_ENV: Readonly<Record<string, string>> = {
  npm_config_cache: NPM_CACHE,
  npm_config_prefer_offline: 'true',
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};

/** The dependency image of examples/node-project (package.json `name`: duration-kit). */
export const EXAMPLE_DEPS_IMAGE = 'agentscm-deps/duration-kit:npm';

/** `agentscm deps build` for the project in `workspace` on `base`; throws with its output on failure. */
export async function buildDepsImage(dataDir: string, workspace: string, base: string): Promise<CliResult> {
  const result = await runCli(
    [
      '--data-dir',
      dataDir,
      'deps',
      'build',
      '--workspace',
      workspace,
      '--image',
      base,
      '--docker-socket',
      DOCKER_SOCKET,
    ],
    { cwd: workspace, env: NPM_ENV, timeoutMs: 600_000 },
  );
  if (result.code !== 0) {
    throw new Error(`deps build failed (exit ${String(result.code)}): ${result.stderr}${result.stdout}`);
  }
  return result;
}
