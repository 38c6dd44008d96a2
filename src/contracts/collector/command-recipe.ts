/**
 * CommandRecipe (docs/command-collector.md "The recipe": "A command action names a strict
 * CommandRecipe JSON resource packaged beside SKILL.md"): the image, argv (no implicit shell),
 * an explicit environment (nothing inherited from the host), the working directory, timeout,
 * limits, and the toolchain and environment identities a review context binds. Pure: shape and
 * bounds only. The recipe's identity is the SHA-256 of its exact bytes.
 */
import { sha256Hex } from '../../crypto/sha256.js';
import { AgentscmError } from '../errors.js';
import { defineDecoder } from '../json/schema.js';
import { relativePathProblem } from '../paths.js';

export const COMMAND_RECIPE_VERSION = 1;

/** Every bound of a recipe (docs/command-collector.md lists them). */
export const RECIPE_LIMITS = {
  maxRecipeBytes: 64 * 1024,
  maxImageBytes: 255,
  minArgv: 1,
  maxArgv: 256,
  maxArgBytes: 4096,
  maxEnv: 128,
  maxEnvValueBytes: 4096,
  maxWorkdirBytes: 512,
  minTimeoutMs: 1,
  maxTimeoutMs: 3_600_000,
  /** Below ~6 MiB the engine refuses the container; 8 MiB leaves room for the shell. */
  minMemoryBytes: 8 * 1024 * 1024,
  maxMemoryBytes: 64 * 1024 * 1024 * 1024,
  minPids: 1,
  maxPids: 32_768,
  minCpuMillis: 10,
  maxCpuMillis: 64_000,
  maxOutputBytes: 8 * 1024 * 1024,
  minScratchBytes: 4096,
  maxScratchBytes: 1024 * 1024 * 1024,
  maxIdentityBytes: 256,
} as const;

export interface CommandRecipeLimits {
  /** Memory limit; swap is disabled (memory+swap = memory). */
  readonly memory_bytes: number;
  readonly pids: number;
  /** CPU in thousandths of a CPU (1000 = one CPU). */
  readonly cpu_millis: number;
  /** stdout + stderr retained together; more output stops the command (outcome output_limit). */
  readonly output_bytes: number;
  /** Size of the writable tmpfs at /tmp. */
  readonly scratch_bytes: number;
}

export interface CommandRecipe {
  readonly version: 1;
  /** Image reference, looked up in the engine (never pulled) and pinned by its image ID. */
  readonly image: string;
  /** Executed as is: no shell is added. */
  readonly argv: readonly string[];
  /** The complete environment added to the image's own; nothing comes from the host. */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory relative to the revision root ("." is the root), mounted at /src. */
  readonly workdir: string;
  readonly timeout_ms: number;
  readonly limits: CommandRecipeLimits;
  /** Toolchain identity the review context binds (e.g. "busybox-1.35"). */
  readonly toolchain: string;
  /** Environment identity the review context binds (e.g. "posix-sh-offline"). */
  readonly environment: string;
}

/** Where the revision is mounted read-only inside the container. */
export const SOURCE_MOUNT = '/src';

const NO_NUL = '^[^\\u0000]*$';
const IDENTITY = {
  type: 'string',
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:@+/=-]*$',
  minLength: 1,
  maxLength: RECIPE_LIMITS.maxIdentityBytes,
} as const;

function integer(minimum: number, maximum: number): { type: 'integer'; minimum: number; maximum: number } {
  return { type: 'integer', minimum, maximum };
}

/** The published JSON Schema (docs/schemas/command-recipe.schema.json). */
export const COMMAND_RECIPE_SCHEMA = {
  $id: 'command-recipe',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'image', 'argv', 'env', 'workdir', 'timeout_ms', 'limits', 'toolchain', 'environment'],
  properties: {
    version: { type: 'integer', const: COMMAND_RECIPE_VERSION },
    image: {
      type: 'string',
      maxLength: RECIPE_LIMITS.maxImageBytes,
      // name[:tag][@sha256:digest], lowercase path components as the engine accepts them.
      pattern:
        '^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]{1,5})?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*' +
        '(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$',
    },
    argv: {
      type: 'array',
      minItems: RECIPE_LIMITS.minArgv,
      maxItems: RECIPE_LIMITS.maxArgv,
      items: { type: 'string', maxUtf8Bytes: RECIPE_LIMITS.maxArgBytes, pattern: NO_NUL },
    },
    env: {
      type: 'object',
      additionalProperties: false,
      maxProperties: RECIPE_LIMITS.maxEnv,
      patternProperties: {
        '^[A-Za-z_][A-Za-z0-9_]{0,127}$': {
          type: 'string',
          maxUtf8Bytes: RECIPE_LIMITS.maxEnvValueBytes,
          pattern: NO_NUL,
        },
      },
    },
    workdir: { type: 'string', minLength: 1, maxUtf8Bytes: RECIPE_LIMITS.maxWorkdirBytes },
    timeout_ms: integer(RECIPE_LIMITS.minTimeoutMs, RECIPE_LIMITS.maxTimeoutMs),
    limits: {
      type: 'object',
      additionalProperties: false,
      required: ['memory_bytes', 'pids', 'cpu_millis', 'output_bytes', 'scratch_bytes'],
      properties: {
        memory_bytes: integer(RECIPE_LIMITS.minMemoryBytes, RECIPE_LIMITS.maxMemoryBytes),
        pids: integer(RECIPE_LIMITS.minPids, RECIPE_LIMITS.maxPids),
        cpu_millis: integer(RECIPE_LIMITS.minCpuMillis, RECIPE_LIMITS.maxCpuMillis),
        output_bytes: integer(0, RECIPE_LIMITS.maxOutputBytes),
        scratch_bytes: integer(RECIPE_LIMITS.minScratchBytes, RECIPE_LIMITS.maxScratchBytes),
      },
    },
    toolchain: IDENTITY,
    environment: IDENTITY,
  },
} as const;

const RECIPE_DECODER = defineDecoder<CommandRecipe>('command-recipe', COMMAND_RECIPE_SCHEMA, {
  versionField: 'version',
  supportedVersions: [COMMAND_RECIPE_VERSION],
});

/** The decoder, for the schema registry and docs/schemas/. */
export const COMMAND_RECIPE_DECODER = RECIPE_DECODER;

/**
 * The working directory is a canonical relative path of the revision or "." (spec path rules:
 * ASCII, "/" only separator, no empty, "." or ".." component, no leading "/", no backslash,
 * control character or ":").
 */
function checkWorkdir(workdir: string): void {
  if (workdir === '.') return;
  const problem = relativePathProblem(workdir);
  if (problem !== undefined) {
    throw new AgentscmError(
      'PATH_INVALID',
      `recipe workdir ${JSON.stringify(workdir.slice(0, 80))} is not "." or a canonical relative path: ${problem}`,
      {
        hint: 'write the working directory relative to the revision root, e.g. "." or "packages/app"',
        details: { pointer: '/workdir' },
      },
    );
  }
}

/** Decode a recipe from its exact bytes (docs/command-collector.md "The recipe": strict CommandRecipe JSON). */
export function decodeCommandRecipe(bytes: Uint8Array): CommandRecipe {
  const recipe = RECIPE_DECODER.decode(bytes, RECIPE_LIMITS.maxRecipeBytes);
  checkWorkdir(recipe.workdir);
  return recipe;
}

/** The recipe's identity: SHA-256 of its exact bytes, lowercase hex. */
export function commandRecipeDigest(bytes: Uint8Array): string {
  return sha256Hex(bytes);
}

/** Container path of the working directory. */
export function containerWorkdir(recipe: CommandRecipe): string {
  return recipe.workdir === '.' ? SOURCE_MOUNT : `${SOURCE_MOUNT}/${recipe.workdir}`;
}
