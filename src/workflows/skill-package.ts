/**
 * The packaged skill (docs/skill-workflows.md "The skill package"): SKILL.md plus explicitly named
 * resources below its directory, read from the immutable revision only — never from the host
 * filesystem. The package identity is a digest over its (path, sha256) entries
 * (docs/skill-workflows.md).
 */
import { digestCanonical, DOMAINS } from '../contracts/digest.js';
import { AgentscmError } from '../contracts/errors.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { validateRelativePath } from '../contracts/paths.js';
import {
  SKILL_ENTRYPOINT_NAME,
  skillDirectory,
  WORKFLOW_LIMITS,
  type WorkflowSkill,
} from '../contracts/workflow-definition.js';
import { sha256Hex } from '../crypto/sha256.js';
import { readRevisionFile, statRevisionPath } from '../native/revisions.js';
import type { Authority } from '../native/store.js';

/** The validated shape of a package, before any source access. */
export interface SkillPackageLayout {
  readonly entrypoint: string;
  /** Directory of SKILL.md with a trailing '/', or '' when SKILL.md is at the revision root. */
  readonly directory: string;
  /** The entrypoint first, then the resources in declared order. */
  readonly paths: readonly string[];
}

export interface SkillPackageEntry {
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
  readonly bytes: Buffer;
}

export interface SkillPackage {
  readonly entrypoint: string;
  readonly directory: string;
  /** Same order as the layout: entrypoint first. */
  readonly entries: readonly SkillPackageEntry[];
  /** Package identity (skillPackageDigest). */
  readonly digest: string;
}

function packageError(message: string, path: string, hint: string): AgentscmError {
  return new AgentscmError('WORKFLOW_SKILL_INVALID', message, { hint, details: { path } });
}

function checkPackagePath(path: string, what: string): void {
  if (Buffer.byteLength(path, 'utf8') > WORKFLOW_LIMITS.maxPackagePathBytes) {
    throw new AgentscmError(
      'SCHEMA_BOUND',
      `${what} "${path.slice(0, 64)}…" is longer than ${WORKFLOW_LIMITS.maxPackagePathBytes} bytes`,
      {
        hint: `keep package paths at most ${WORKFLOW_LIMITS.maxPackagePathBytes} bytes`,
        details: { path },
      },
    );
  }
  validateRelativePath(path, what);
}

/**
 * Validate the package declaration alone (docs/skill-workflows.md "The skill package": the
 * entrypoint's file name is exactly SKILL.md, resources are within its directory, at most 63 of
 * them). No source access.
 */
export function layoutSkillPackage(skill: WorkflowSkill): SkillPackageLayout {
  if (skill.resources.length > WORKFLOW_LIMITS.maxResources) {
    throw new AgentscmError(
      'SCHEMA_BOUND',
      `the skill names ${skill.resources.length} resources; at most ${WORKFLOW_LIMITS.maxResources} are allowed ` +
        `(${WORKFLOW_LIMITS.maxPackageEntries} package entries with SKILL.md)`,
      {
        hint: 'package fewer resources',
      },
    );
  }
  checkPackagePath(skill.entrypoint, 'skill entrypoint');
  const slash = skill.entrypoint.lastIndexOf('/');
  const name = skill.entrypoint.slice(slash + 1);
  if (name !== SKILL_ENTRYPOINT_NAME) {
    throw packageError(
      `the skill entrypoint "${skill.entrypoint}" must be a file named exactly ${SKILL_ENTRYPOINT_NAME}`,
      skill.entrypoint,
      `name the entrypoint DIR/${SKILL_ENTRYPOINT_NAME}`,
    );
  }
  const directory = skillDirectory(skill.entrypoint);
  const seen = new Set<string>([skill.entrypoint]);
  for (const resource of skill.resources) {
    checkPackagePath(resource, 'skill resource');
    if (!resource.startsWith(directory)) {
      throw packageError(
        `skill resource "${resource}" is not within the skill directory "${directory || '/'}"`,
        resource,
        'declare only files below the directory of SKILL.md',
      );
    }
    if (seen.has(resource)) {
      throw packageError(
        resource === skill.entrypoint
          ? `skill resource "${resource}" is the entrypoint, which is included automatically`
          : `skill resource "${resource}" is declared twice`,
        resource,
        'declare each resource once and leave SKILL.md out of resources',
      );
    }
    seen.add(resource);
  }
  return { entrypoint: skill.entrypoint, directory, paths: [skill.entrypoint, ...skill.resources] };
}

/** Full native source path of a path relative to the skill directory (command runner). */
export function resolvePackagePath(layout: SkillPackageLayout, relative: string): string {
  return `${layout.directory}${relative}`;
}

/**
 * Package identity: the plan-domain digest of {"kind":"skill-package","version":1,
 * "entrypoint","entries":[{"path","sha256"}…]} with entries sorted by path (bytewise), so the
 * identity depends on the set of packaged bytes, not on declaration order. The leading "kind"
 * keeps it apart from the plan object hashed under the same domain.
 */
export function skillPackageDigest(
  entrypoint: string,
  entries: readonly { readonly path: string; readonly sha256: string }[],
): string {
  return digestCanonical(DOMAINS.plan, skillPackageToJson(entrypoint, entries));
}

/** The canonical object hashed by skillPackageDigest. */
export function skillPackageToJson(
  entrypoint: string,
  entries: readonly { readonly path: string; readonly sha256: string }[],
): JsonObject {
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.path, 'utf8'), Buffer.from(b.path, 'utf8')));
  return {
    kind: 'skill-package',
    version: 1,
    entrypoint,
    entries: sorted.map((entry) => ({ path: entry.path, sha256: entry.sha256 })),
  };
}

/**
 * Read every package file from the immutable revision (spec: "AgentSCM reads every declared
 * skill file from the immutable revision"). Every entry is looked up and size-checked before
 * any content is read. Call inside one authority read snapshot.
 */
export function loadSkillPackage(
  auth: Authority,
  repository: string,
  revision: string,
  layout: SkillPackageLayout,
): SkillPackage {
  const sizes: number[] = [];
  let total = 0;
  for (const path of layout.paths) {
    const entry = statRevisionPath(auth, repository, revision, path);
    if (entry === null) {
      throw packageError(
        `skill file "${path}" does not exist in revision ${revision}`,
        path,
        'commit the skill file to the revision, or fix the path',
      );
    }
    if (entry.mode !== 'file' && entry.mode !== 'executable') {
      throw packageError(
        `skill file "${path}" is a ${entry.mode}, not a regular file`,
        path,
        'package regular files only; symbolic links are not followed',
      );
    }
    const size = Number(entry.size);
    if (size > WORKFLOW_LIMITS.maxSkillFileBytes) {
      throw new AgentscmError(
        'INPUT_TOO_LARGE',
        `skill file "${path}" has ${size} bytes, more than the limit of ${WORKFLOW_LIMITS.maxSkillFileBytes}`,
        {
          hint: 'keep each packaged skill file at most 1 MiB',
          details: { path, size, limit: WORKFLOW_LIMITS.maxSkillFileBytes },
        },
      );
    }
    total += size;
    if (total > WORKFLOW_LIMITS.maxSkillPackageBytes) {
      throw new AgentscmError(
        'INPUT_TOO_LARGE',
        `the skill package exceeds ${WORKFLOW_LIMITS.maxSkillPackageBytes} bytes`,
        {
          hint: 'package fewer or smaller resources',
          details: { limit: WORKFLOW_LIMITS.maxSkillPackageBytes },
        },
      );
    }
    sizes.push(size);
  }
  const entries = layout.paths.map((path, index) => {
    const bytes = readRevisionFile(auth, repository, revision, path, { maxBytes: sizes[index] ?? 0 });
    // The store verifies content against its blob digest; hashing here keeps the package
    // identity independent of how the store names its blobs.
    const sha256 = sha256Hex(bytes);
    return { path, sha256, size: bytes.byteLength, bytes };
  });
  return {
    entrypoint: layout.entrypoint,
    directory: layout.directory,
    entries,
    digest: skillPackageDigest(layout.entrypoint, entries),
  };
}
