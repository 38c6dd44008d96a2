/**
 * The npm lockfile a dependency image is built from (docs/deps.md): its SHA-256 (the image's
 * identity and the digest a step compares), the packages it marks with install scripts, and the
 * refusal of a step whose revision carries another lockfile than its image was built from.
 */
import { readFileSync, statSync } from 'node:fs';

import type { CommandRecipe } from '../contracts/collector/command-recipe.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { sha256Hex } from '../crypto/sha256.js';
import { readRevisionFile } from '../native/revisions.js';
import type { Authority } from '../native/store.js';
import { DEPS_RECIPE_ENV } from '../workflows/checks/recipe-flags.js';

/** A lockfile larger than this is refused (npm's own for a large monorepo stays well below). */
export const MAX_LOCKFILE_BYTES = 32 * 1024 * 1024;
/** Where the modules sit in a dependency image: Node's resolution finds them from /src by walking up. */
export const DEPS_MODULES_DIR = DEPS_RECIPE_ENV.modules;
/** The recipe env naming the lockfile (relative to the revision root) a step's image was built from. */
export const DEPS_LOCKFILE_ENV = DEPS_RECIPE_ENV.lockfile;
/** Labels of a dependency image. */
export const DEPS_LABELS = {
  lockfile: 'io.agentscm.deps.lockfile-sha256',
  base: 'io.agentscm.deps.base-image',
  scripts: 'io.agentscm.deps.install-scripts',
} as const;

export interface Lockfile {
  readonly path: string;
  readonly bytes: Buffer;
  readonly sha256: string;
  /** Package paths (node_modules/…) whose lockfile entry has hasInstallScript, sorted. */
  readonly installScripts: string[];
}

function invalid(message: string, hint: string, cause?: unknown): AgentscmError {
  return new AgentscmError('DEPS_LOCKFILE_INVALID', message, { hint, ...(cause === undefined ? {} : { cause }) });
}

/** Decode lockfile bytes: an object with lockfileVersion 2 or 3 and a packages object. */
export function parseLockfile(path: string, bytes: Buffer): Lockfile {
  let value: JsonValue;
  try {
    value = parseStrictJson(bytes, { maxBytes: MAX_LOCKFILE_BYTES, maxDepth: 16 });
  } catch (error) {
    if (!isAgentscmError(error)) throw error;
    throw invalid(`${path} is not JSON: ${error.message}`, 'regenerate it with npm install', error);
  }
  const version = isJsonObject(value) ? value.lockfileVersion : undefined;
  if (!isJsonObject(value) || (version !== 2 && version !== 3 && version !== 2n && version !== 3n))
    throw invalid(
      `${path} is not an npm lockfile of version 2 or 3`,
      'regenerate it with npm 7 or later (npm install --package-lock-only)',
    );
  const packages = value.packages;
  if (!isJsonObject(packages))
    throw invalid(`${path} has no "packages" object`, 'regenerate it with npm install --package-lock-only');
  const installScripts = Object.entries(packages)
    .filter(([name, entry]) => name !== '' && isJsonObject(entry) && entry.hasInstallScript === true)
    .map(([name]) => name)
    .sort();
  return { path, bytes, sha256: sha256Hex(bytes), installScripts };
}

/** Read and decode the lockfile at `path` on this machine. */
export function readLockfile(path: string): Lockfile {
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > MAX_LOCKFILE_BYTES)
      throw invalid(`${path} has ${size} bytes, more than ${MAX_LOCKFILE_BYTES}`, 'use a smaller lockfile');
    bytes = readFileSync(path);
  } catch (error) {
    if (isAgentscmError(error)) throw error;
    throw invalid(
      `cannot read the lockfile ${path}: ${(error as Error).message}`,
      'name the package-lock.json with --lockfile (npm install --package-lock-only writes one)',
      error,
    );
  }
  return parseLockfile(path, bytes);
}

/** Refuse install scripts unless the operator trusts the packages (--allow-scripts). */
export function refuseInstallScripts(lockfile: Lockfile, allowScripts: boolean): void {
  if (allowScripts || lockfile.installScripts.length === 0) return;
  const shown = lockfile.installScripts.slice(0, 5).join(', ');
  const more = lockfile.installScripts.length > 5 ? ` and ${lockfile.installScripts.length - 5} more` : '';
  throw new AgentscmError(
    'DEPS_INSTALL_SCRIPTS',
    `${lockfile.path} has ${lockfile.installScripts.length} package(s) with install scripts: ${shown}${more}`,
    {
      hint:
        'install scripts run code from those packages on this machine: pass --allow-scripts only if you trust ' +
        'them (docs/deps.md "Install scripts")',
    },
  );
}

/**
 * Before any container runs: a recipe naming a lockfile (env AGENTSCM_DEPS_LOCKFILE) runs only
 * when the revision's lockfile has the digest the image's label carries. `readRevisionLockfile`
 * returns the revision's bytes, or null when the revision has no such file.
 */
export function refuseStaleDeps(
  step: string,
  recipe: Pick<CommandRecipe, 'env' | 'image'>,
  labels: Readonly<Record<string, string>>,
  readRevisionLockfile: (path: string) => Buffer | null,
): void {
  const path = recipe.env[DEPS_LOCKFILE_ENV];
  if (path === undefined) return;
  const built = labels[DEPS_LABELS.lockfile];
  const bytes = readRevisionLockfile(path);
  const actual = bytes === null ? null : sha256Hex(bytes);
  if (built !== undefined && actual === built) return;
  const what =
    actual === null
      ? `the revision has no ${path}`
      : built === undefined
        ? `the image ${recipe.image} carries no lockfile digest`
        : `${path} in the revision has SHA-256 ${actual}, the image ${recipe.image} was built from ${built}`;
  throw new AgentscmError('DEPS_LOCKFILE_CHANGED', `step "${step}": ${what}; its dependencies would not match`, {
    hint:
      `rebuild the dependency image: agentscm deps build --lockfile ${path} --image BASE, then pin it in a new ` +
      'profile: agentscm agent-task collector add (docs/deps.md "A changed lockfile")',
  });
}

/** The revision's lockfile bytes at `path`, or null when the revision has no such file. */
export function revisionLockfileReader(
  auth: Authority,
  repository: string,
  revision: string,
): (path: string) => Buffer | null {
  return (path) => {
    try {
      return readRevisionFile(auth, repository, revision, path, { maxBytes: MAX_LOCKFILE_BYTES });
    } catch (error) {
      if (isAgentscmError(error) && error.code === 'PATH_NOT_FOUND') return null;
      throw error;
    }
  };
}
