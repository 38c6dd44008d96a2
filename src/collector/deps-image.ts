/**
 * `agentscm deps build` (docs/deps.md): the host's `npm ci` of one lockfile into a private
 * temporary directory, then a new local image FROM the base image (pinned by its ID) plus that
 * node_modules at /node_modules, built through the Engine API from an in-process tar context.
 * The image is tagged by the lockfile's SHA-256 and the base image ID, labelled with both, and
 * the project's stable reference (what `check add --deps npm` names) is moved onto it. The same
 * lockfile on the same base reuses the image without starting npm.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { execa } from 'execa';

import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { isJsonObject } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { DEPS_LABELS, DEPS_MODULES_DIR, readLockfile, refuseInstallScripts, type Lockfile } from './deps-lockfile.js';
import { treeEntries, writeTar } from './deps-tar.js';
import type { DockerClient, ImageInfo } from './docker-client.js';

/** The repository every dependency image is tagged in. */
export const DEPS_REPOSITORY = 'agentscm-deps';
/** The tag of a project's stable reference `agentscm-deps/NAME:npm`. */
export const DEPS_STABLE_TAG = 'npm';
const BUILD_TIMEOUT_MS = 600_000;
const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;

export interface DepsBuildInput {
  /** The lockfile, relative to `workspace` (default: the current directory). */
  readonly lockfile: string;
  readonly workspace?: string | undefined;
  /** The base image reference; present in the engine (never pulled). */
  readonly image: string;
  readonly allowScripts: boolean;
  readonly progress?: (line: string) => void;
}

export interface DepsBuildResult {
  /** The dependency image's ID. */
  readonly image_id: string;
  /** Its content tag: agentscm-deps:LOCK16-BASE12. */
  readonly image: string;
  /** The project's stable reference, now on this image (what check add --deps npm names). */
  readonly reference: string;
  readonly lockfile: string;
  readonly lockfile_sha256: string;
  readonly base_image: string;
  readonly base_image_id: string;
  /** True when the image already existed for this lockfile and base (npm did not run). */
  readonly reused: boolean;
  readonly install_scripts: boolean;
}

/** A package name as one image repository component: `@scope/name` → `scope-name`. */
export function depsProjectName(packageName: string): string {
  const name = packageName
    .toLowerCase()
    .replace(/^@/, '')
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[._-]+$/g, '')
    .replace(/[._-]{2,}/g, '-')
    .slice(0, 64)
    .replace(/[._-]+$/, '');
  return name === '' ? 'project' : name;
}

/** The name in the package.json beside the lockfile (the directory's name when it has none). */
export function readProjectName(dir: string): string {
  const file = join(dir, 'package.json');
  let value;
  try {
    value = parseStrictJson(readFileBounded(file), { maxBytes: MAX_PACKAGE_JSON_BYTES });
  } catch (error) {
    throw new AgentscmError('DEPS_LOCKFILE_INVALID', `cannot read ${file}: ${(error as Error).message}`, {
      hint: 'npm ci needs the package.json beside the lockfile',
      cause: error,
    });
  }
  const name = isJsonObject(value) && typeof value.name === 'string' ? value.name : resolve(dir).split('/').pop();
  return depsProjectName(name ?? 'project');
}

function readFileBounded(file: string): Buffer {
  if (statSync(file).size > MAX_PACKAGE_JSON_BYTES) throw new Error(`more than ${MAX_PACKAGE_JSON_BYTES} bytes`);
  return readFileSync(file);
}

/** The stable reference of the project whose package.json sits in `dir`. */
export function depsReference(dir: string): string {
  return `${DEPS_REPOSITORY}/${readProjectName(dir)}:${DEPS_STABLE_TAG}`;
}

function contentTag(lockfile: Lockfile, baseId: string): string {
  return `${lockfile.sha256.slice(0, 16)}-${baseId.replace(/^sha256:/, '').slice(0, 12)}`;
}

async function inspectOrNull(client: DockerClient, reference: string): Promise<ImageInfo | null> {
  try {
    return await client.inspectImage(reference);
  } catch (error) {
    if (isAgentscmError(error) && error.code === 'IMAGE_NOT_FOUND') return null;
    throw error;
  }
}

function dockerfile(baseId: string, lockfile: Lockfile, scripts: boolean): string {
  return [
    `FROM ${baseId}`,
    `COPY node_modules ${DEPS_MODULES_DIR}`,
    `ENV PATH=${DEPS_MODULES_DIR}/.bin:$PATH NODE_PATH=${DEPS_MODULES_DIR}`,
    `LABEL ${DEPS_LABELS.lockfile}="${lockfile.sha256}" ${DEPS_LABELS.base}="${baseId}" ` +
      `${DEPS_LABELS.scripts}="${String(scripts)}"`,
    '',
  ].join('\n');
}

/** `npm ci` of the lockfile in a private copy of its directory's package.json; the directory. */
async function npmCi(
  lockfile: Lockfile,
  dir: string,
  allowScripts: boolean,
  progress: (l: string) => void,
): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'agentscm-deps-'));
  copyFileSync(join(dir, 'package.json'), join(work, 'package.json'));
  copyFileSync(lockfile.path, join(work, 'package-lock.json'));
  const args = ['ci', '--no-audit', '--no-fund', '--loglevel=error', ...(allowScripts ? [] : ['--ignore-scripts'])];
  progress(`npm ${args.join(' ')} (in a private directory)`);
  const result = await execa('npm', args, { cwd: work, reject: false, stdin: 'ignore', all: true });
  if (result.exitCode !== 0 || !existsSync(join(work, 'node_modules'))) {
    rmSync(work, { recursive: true, force: true });
    const last = (result.all ?? '').trim().split('\n').slice(-6).join(' | ');
    const how = result.exitCode === undefined ? 'npm did not start' : `exit ${String(result.exitCode)}`;
    throw new AgentscmError('DEPS_INSTALL_FAILED', `npm ci failed (${how}): ${last.slice(0, 1000)}`, {
      hint: 'run npm ci in the project yourself to see why (a registry npm can reach, a lockfile npm accepts)',
    });
  }
  return work;
}

function builtId(answer: string, tag: string): void {
  for (const line of answer.split('\n')) {
    if (line.trim() === '') continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      continue;
    }
    const error = (message as { error?: unknown }).error;
    if (typeof error === 'string')
      throw new AgentscmError('RUNTIME_API_ERROR', `the engine could not build ${tag}: ${error.slice(0, 500)}`);
  }
}

/** See module comment. */
export async function buildDepsImage(client: DockerClient, input: DepsBuildInput): Promise<DepsBuildResult> {
  const progress = input.progress ?? ((): void => undefined);
  const lockfilePath = resolve(input.workspace ?? '.', input.lockfile);
  const lockfile = readLockfile(lockfilePath);
  refuseInstallScripts(lockfile, input.allowScripts);
  const dir = dirname(lockfilePath);
  const reference = depsReference(dir);
  const base = await client.inspectImage(input.image);
  const tag = contentTag(lockfile, base.id);
  const image = `${DEPS_REPOSITORY}:${tag}`;
  const result = (id: string, reused: boolean): DepsBuildResult => ({
    image_id: id,
    image,
    reference,
    lockfile: lockfilePath,
    lockfile_sha256: lockfile.sha256,
    base_image: input.image,
    base_image_id: base.id,
    reused,
    install_scripts: input.allowScripts && lockfile.installScripts.length > 0,
  });
  const [repo, stable] = [reference.slice(0, reference.lastIndexOf(':')), DEPS_STABLE_TAG];
  const existing = await inspectOrNull(client, image);
  if (
    existing !== null &&
    existing.labels[DEPS_LABELS.lockfile] === lockfile.sha256 &&
    existing.labels[DEPS_LABELS.base] === base.id
  ) {
    progress(`reusing ${image} (${existing.id}) for lockfile ${lockfile.sha256}`);
    await client.tagImage(existing.id, repo, stable);
    return result(existing.id, true);
  }
  const work = await npmCi(lockfile, dir, input.allowScripts, progress);
  try {
    const scripts = input.allowScripts && lockfile.installScripts.length > 0;
    const entries = [
      {
        name: 'Dockerfile',
        kind: 'file' as const,
        mode: 0o644,
        data: Buffer.from(dockerfile(base.id, lockfile, scripts)),
      },
      ...treeEntries(join(work, 'node_modules'), 'node_modules'),
    ];
    const context = writeTar(entries);
    progress(`building ${image} from ${input.image} (${entries.length} entries, ${context.byteLength} bytes)`);
    builtId(await client.buildImage(context, image, BUILD_TIMEOUT_MS), image);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const built = await client.inspectImage(image);
  await client.tagImage(built.id, repo, stable);
  progress(`tagged ${reference}`);
  return result(built.id, false);
}

/**
 * `check add --deps npm`: the project's dependency image must exist, be built from the lockfile
 * the workspace holds now, on the base image named. Returns its stable reference.
 */
export async function requireDepsImage(
  client: DockerClient,
  input: { readonly dir: string; readonly lockfile: string; readonly base: string },
): Promise<{ reference: string; lockfile_sha256: string; image_id: string }> {
  const lockfile = readLockfile(join(input.dir, input.lockfile));
  const reference = depsReference(input.dir);
  const base = await client.inspectImage(input.base);
  const image = await inspectOrNull(client, reference);
  const hint = `build it first: agentscm deps build --lockfile ${input.lockfile} --image ${input.base} (docs/deps.md)`;
  if (image === null)
    throw new AgentscmError('DEPS_IMAGE_NOT_BUILT', `the engine has no dependency image ${reference}`, { hint });
  if (image.labels[DEPS_LABELS.lockfile] !== lockfile.sha256 || image.labels[DEPS_LABELS.base] !== base.id)
    throw new AgentscmError(
      'DEPS_IMAGE_NOT_BUILT',
      `${reference} was built from another lockfile or base image than ${input.lockfile} (SHA-256 ` +
        `${lockfile.sha256}) on ${input.base}`,
      { hint },
    );
  return { reference, lockfile_sha256: lockfile.sha256, image_id: image.id };
}
