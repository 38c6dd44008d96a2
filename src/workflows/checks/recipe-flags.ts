/**
 * The recipe `check add` writes from its flags (docs/checks.md "Flags and defaults"): durations
 * (`90s`, `10m`), sizes (`512m`, `2g`), CPUs (`1.5` → cpu_millis 1500), network `none` only,
 * and the defaults. Every bound of the recipe contract is checked here, before anything is
 * written, and the bytes are then decoded by the CommandRecipe decoder itself.
 */
import {
  COMMAND_RECIPE_VERSION,
  decodeCommandRecipe,
  RECIPE_LIMITS,
  type CommandRecipe,
} from '../../contracts/collector/command-recipe.js';
import { AgentscmError, isAgentscmError } from '../../contracts/errors.js';

export const CHECK_DEFAULTS = {
  timeout: '10m',
  memory: '2g',
  cpus: '2',
  network: 'none',
  workdir: '.',
  pids: 256,
  outputBytes: 1024 * 1024,
  scratchBytes: 64 * 1024 * 1024,
  environment: 'oci-offline',
} as const;

export interface RecipeFlags {
  readonly image: string;
  readonly argv: readonly string[];
  readonly timeout?: string | undefined;
  readonly memory?: string | undefined;
  readonly cpus?: string | undefined;
  readonly network?: string | undefined;
  readonly workdir?: string | undefined;
  readonly toolchain?: string | undefined;
  readonly environment?: string | undefined;
  /** `--env NAME=VALUE`, repeatable. */
  readonly env?: readonly string[] | undefined;
  /** `--deps npm`: the step runs on the dependency image of this lockfile (docs/deps.md). */
  readonly deps?: { readonly lockfile: string } | undefined;
}

/** Where a dependency image holds the modules, and the env naming the lockfile it was built from. */
export const DEPS_RECIPE_ENV = { modules: '/node_modules', lockfile: 'AGENTSCM_DEPS_LOCKFILE' } as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * `--env NAME=VALUE…` and `--deps` → the recipe's env: names as the recipe contract allows, each
 * once, at most RECIPE_LIMITS.maxEnv, values at most maxEnvValueBytes and without NUL. `--deps npm`
 * adds NODE_PATH (the modules) and AGENTSCM_DEPS_LOCKFILE (the lockfile the step compares).
 */
export function buildEnv(pairs: readonly string[], deps: RecipeFlags['deps']): Record<string, string> {
  const env: Record<string, string> = {};
  const reserved = new Set<string>();
  if (deps !== undefined) {
    env.NODE_PATH = DEPS_RECIPE_ENV.modules;
    env[DEPS_RECIPE_ENV.lockfile] = deps.lockfile;
    reserved.add('NODE_PATH').add(DEPS_RECIPE_ENV.lockfile);
  }
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (eq < 0 || !ENV_NAME.test(name))
      throw invalid(
        `--env ${JSON.stringify(pair.slice(0, 80))} is not NAME=VALUE with a name of letters, digits and _`,
        'write each variable as --env NAME=VALUE, e.g. --env TZ=UTC',
        'env',
      );
    const value = pair.slice(eq + 1);
    if (name in env)
      throw invalid(
        reserved.has(name) ? `--env ${name} is set by --deps npm` : `--env ${name} is given twice`,
        'give each variable once (docs/checks.md "Flags and defaults")',
        'env',
      );
    if (Buffer.byteLength(value) > RECIPE_LIMITS.maxEnvValueBytes || value.includes('\0'))
      throw invalid(
        `--env ${name} has a value over ${RECIPE_LIMITS.maxEnvValueBytes} bytes or holding NUL`,
        `keep each value within ${RECIPE_LIMITS.maxEnvValueBytes} bytes`,
        'env',
      );
    env[name] = value;
  }
  if (Object.keys(env).length > RECIPE_LIMITS.maxEnv)
    throw invalid(
      `${Object.keys(env).length} environment variables, more than the recipe's ${RECIPE_LIMITS.maxEnv}`,
      `give at most ${RECIPE_LIMITS.maxEnv} variables (--deps npm takes 2 of them)`,
      'env',
    );
  return env;
}

function invalid(message: string, hint: string, flag: string): AgentscmError {
  return new AgentscmError('CHECK_INVALID', message, { hint, details: { flag } });
}

function inRange(value: number, min: number, max: number, flag: string, shown: string, unit: string): number {
  if (Number.isSafeInteger(value) && value >= min && value <= max) return value;
  throw invalid(
    `--${flag} ${shown} is outside ${min}-${max} ${unit}`,
    `give --${flag} within the recipe bounds (docs/command-collector.md "The recipe")`,
    flag,
  );
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `250ms`, `90s`, `10m`, `1h` → milliseconds, within the recipe's timeout bounds. */
export function parseDuration(text: string): number {
  const match = /^([0-9]{1,10})(ms|s|m|h)$/.exec(text);
  if (match === null)
    throw invalid(
      `--timeout ${JSON.stringify(text.slice(0, 40))} is not a duration`,
      'write a whole number with ms, s, m or h, e.g. 90s or 10m',
      'timeout',
    );
  const ms = Number(match[1]) * (DURATION_UNITS[match[2] ?? 'ms'] ?? 1);
  return inRange(ms, RECIPE_LIMITS.minTimeoutMs, RECIPE_LIMITS.maxTimeoutMs, 'timeout', text, 'milliseconds');
}

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** `512m`, `2g`, `8388608` → bytes (powers of 1024), within the recipe's memory bounds. */
export function parseMemory(text: string): number {
  const match = /^([0-9]{1,12})([kmg]?)$/.exec(text.toLowerCase());
  if (match === null)
    throw invalid(
      `--memory ${JSON.stringify(text.slice(0, 40))} is not a size`,
      'write a whole number of bytes, or with k, m or g (powers of 1024), e.g. 512m or 2g',
      'memory',
    );
  const bytes = Number(match[1]) * (SIZE_UNITS[match[2] ?? ''] ?? 1);
  return inRange(bytes, RECIPE_LIMITS.minMemoryBytes, RECIPE_LIMITS.maxMemoryBytes, 'memory', text, 'bytes');
}

/** `2`, `0.5`, `1.25` CPUs → thousandths of a CPU, within the recipe's cpu_millis bounds. */
export function parseCpus(text: string): number {
  const match = /^([0-9]{1,5})(?:\.([0-9]{1,3}))?$/.exec(text);
  if (match === null)
    throw invalid(
      `--cpus ${JSON.stringify(text.slice(0, 40))} is not a number of CPUs`,
      'write CPUs as a number with at most 3 decimals, e.g. 2 or 0.5',
      'cpus',
    );
  const millis = Number(match[1]) * 1000 + Number((match[2] ?? '').padEnd(3, '0'));
  return inRange(
    millis,
    RECIPE_LIMITS.minCpuMillis,
    RECIPE_LIMITS.maxCpuMillis,
    'cpus',
    `${text} (millis)`,
    'cpu_millis',
  );
}

/**
 * The command must be an argv given after `--`: a single word holding spaces is a shell command
 * line, which is not run through a shell (the recipe adds none).
 */
export function checkArgv(argv: readonly string[]): readonly string[] {
  if (argv.length === 0)
    throw invalid(
      'no command given',
      "give the command after --, one word per argument: -- npm test, or -- sh -c 'npm test'",
      'argv',
    );
  const first = argv[0] ?? '';
  if (argv.length === 1 && /\s/.test(first))
    throw invalid(
      `the command ${JSON.stringify(first.slice(0, 80))} is one word holding spaces, not an argv`,
      `split it into words (-- ${first.trim().split(/\s+/).slice(0, 4).join(' ')}) or run it through a shell: ` +
        `-- sh -c ${JSON.stringify(first.slice(0, 60))}`,
      'argv',
    );
  if (first === '') throw invalid('the command is empty', 'give the executable as the first word after --', 'argv');
  return argv;
}

/** The recipe's exact bytes (pretty JSON with a final newline) and its decoded form. */
export function buildRecipe(flags: RecipeFlags): { recipe: CommandRecipe; bytes: Buffer } {
  const network = flags.network ?? CHECK_DEFAULTS.network;
  if (network !== 'none')
    throw invalid(
      `--network ${JSON.stringify(network.slice(0, 40))} is not supported`,
      'the command collector always runs without a network: use --network none (the default)',
      'network',
    );
  const value = {
    version: COMMAND_RECIPE_VERSION,
    image: flags.image,
    argv: [...checkArgv(flags.argv)],
    env: buildEnv(flags.env ?? [], flags.deps),
    workdir: flags.workdir ?? CHECK_DEFAULTS.workdir,
    timeout_ms: parseDuration(flags.timeout ?? CHECK_DEFAULTS.timeout),
    limits: {
      memory_bytes: parseMemory(flags.memory ?? CHECK_DEFAULTS.memory),
      pids: CHECK_DEFAULTS.pids,
      cpu_millis: parseCpus(flags.cpus ?? CHECK_DEFAULTS.cpus),
      output_bytes: CHECK_DEFAULTS.outputBytes,
      scratch_bytes: CHECK_DEFAULTS.scratchBytes,
    },
    toolchain: flags.toolchain ?? flags.image,
    environment: flags.environment ?? CHECK_DEFAULTS.environment,
  };
  const bytes = Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
  try {
    return { recipe: decodeCommandRecipe(bytes), bytes };
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    throw new AgentscmError('CHECK_INVALID', `the recipe would be invalid: ${error.message}`, {
      hint: 'fix the flag the message names (docs/checks.md "Flags and defaults")',
      details: { cause_code: error.code },
      cause: error,
    });
  }
}
