/**
 * Installed target workflow requirements (docs/requirements.md: an operator-installed native target
 * workflow requirement additionally requires every required step to pass). The authority keeps each
 * installed definition's exact canonical bytes under its requirement digest and points a target at
 * its current one. Compilation lives in src/workflows/requirement.ts; this module only stores and
 * reads.
 */
import { AgentscmError } from '../contracts/errors.js';
import { decodeWorkflowDefinition, firstCommandRecipePath } from '../contracts/workflow-definition.js';
import { sha256Hex } from '../crypto/sha256.js';
import { checkDigest, checkGenericId, checkRepositoryId } from './checks.js';
import { u64FromSql, u64ToSql } from './sqlite.js';
import { prepared, readTransaction, writeTransaction, type Authority } from './store.js';
import { getTarget } from './targets.js';

/** One installed definition, immutable. */
export interface StoredRequirement {
  readonly repository: string;
  /** Plan digest of the definition as compiled at installation (docs/requirements.md). */
  readonly requirement_digest: string;
  readonly name: string;
  /** Canonical definition bytes. */
  readonly definition: Buffer;
  readonly definition_sha256: string;
  readonly skill_digest: string;
  readonly revision: string;
  readonly policy_epoch: bigint;
  readonly created_at_ms: number;
}

/** A target's current requirement. */
export interface TargetRequirement extends StoredRequirement {
  readonly target: string;
  readonly installed_at_ms: number;
}

export interface InstallRequirementInput {
  readonly repository: string;
  readonly target: string;
  readonly requirementDigest: string;
  readonly name: string;
  readonly definition: Uint8Array;
  readonly skillDigest: string;
  readonly revision: string;
  readonly policyEpoch: bigint;
  readonly nowMs: number;
}

interface RequirementRow {
  repository: string;
  requirement_digest: string;
  name: string;
  definition: Buffer;
  definition_sha256: string;
  skill_digest: string;
  revision: string;
  policy_epoch: string;
  created_at_ms: number;
}

function toStored(row: RequirementRow): StoredRequirement {
  if (sha256Hex(row.definition) !== row.definition_sha256) {
    throw new AgentscmError(
      'STORE_CORRUPT',
      `requirement ${row.requirement_digest} does not match its stored definition bytes`,
    );
  }
  return { ...row, policy_epoch: u64FromSql(row.policy_epoch) };
}

function notFound(repository: string, what: string, target = 'TARGET'): AgentscmError {
  return new AgentscmError(
    'REQUIREMENT_NOT_FOUND',
    `repository ${repository} has no installed workflow requirement ${what}`,
    {
      hint: `install one with \`agentscm requirement install --target ${target} FILE\``,
    },
  );
}

/**
 * Install a compiled definition as the target's required workflow (docs/requirements.md), in the
 * caller's write transaction or its own. Reinstalling the current requirement changes nothing; returns whether the
 * target's requirement changed.
 */
export function installRequirement(
  auth: Authority,
  input: InstallRequirementInput,
): { requirement: TargetRequirement; changed: boolean } {
  checkRepositoryId(input.repository);
  checkGenericId(input.target, 'target name');
  checkDigest(input.requirementDigest, 'requirement digest');
  return writeTransaction(auth, () => {
    getTarget(auth, input.repository, input.target);
    const definition = Buffer.from(input.definition);
    const definitionSha256 = sha256Hex(definition);
    const existing = prepared(auth, 'SELECT * FROM requirements WHERE repository = ? AND requirement_digest = ?').get(
      input.repository,
      input.requirementDigest,
    ) as RequirementRow | undefined;
    if (existing === undefined) {
      prepared(
        auth,
        `INSERT INTO requirements (repository, requirement_digest, name, definition, definition_sha256, skill_digest,
          revision, policy_epoch, created_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        input.repository,
        input.requirementDigest,
        input.name,
        definition,
        definitionSha256,
        input.skillDigest,
        input.revision,
        u64ToSql(input.policyEpoch),
        input.nowMs,
      );
    }
    const current = prepared(
      auth,
      'SELECT requirement_digest FROM target_requirements WHERE repository = ? AND target = ?',
    ).get(input.repository, input.target) as { requirement_digest: string } | undefined;
    const changed = current?.requirement_digest !== input.requirementDigest;
    if (changed) {
      prepared(
        auth,
        `INSERT INTO target_requirements (repository, target, requirement_digest, installed_at_ms) VALUES (?, ?, ?, ?)
         ON CONFLICT (repository, target) DO UPDATE SET requirement_digest = excluded.requirement_digest,
           installed_at_ms = excluded.installed_at_ms`,
      ).run(input.repository, input.target, input.requirementDigest, input.nowMs);
    }
    const requirement = findTargetRequirement(auth, input.repository, input.target);
    if (requirement === null) throw new AgentscmError('INTERNAL', 'the installed requirement is not readable');
    return { requirement, changed };
  });
}

/** Every requirement currently installed on a target of the repository, by target name. */
export function listTargetRequirements(auth: Authority, repository: string): TargetRequirement[] {
  checkRepositoryId(repository);
  return readTransaction(auth, () =>
    (
      prepared(
        auth,
        `SELECT r.*, t.target, t.installed_at_ms FROM target_requirements t
         JOIN requirements r ON r.repository = t.repository AND r.requirement_digest = t.requirement_digest
         WHERE t.repository = ? ORDER BY t.target`,
      ).all(repository) as (RequirementRow & { target: string; installed_at_ms: number })[]
    ).map((row) => ({ ...toStored(row), target: row.target, installed_at_ms: row.installed_at_ms })),
  );
}

/**
 * The target's current requirement, or null (docs/requirements.md: the installed target workflow requirement).
 */
export function findTargetRequirement(auth: Authority, repository: string, target: string): TargetRequirement | null {
  checkRepositoryId(repository);
  checkGenericId(target, 'target name');
  return readTransaction(auth, () => {
    const row = prepared(
      auth,
      `SELECT r.*, t.target, t.installed_at_ms FROM target_requirements t
       JOIN requirements r ON r.repository = t.repository AND r.requirement_digest = t.requirement_digest
       WHERE t.repository = ? AND t.target = ?`,
    ).get(repository, target) as (RequirementRow & { target: string; installed_at_ms: number }) | undefined;
    if (row === undefined) return null;
    return { ...toStored(row), target: row.target, installed_at_ms: row.installed_at_ms };
  });
}

/** The target's current requirement (docs/requirements.md); REQUIREMENT_NOT_FOUND otherwise. */
export function getTargetRequirement(auth: Authority, repository: string, target: string): TargetRequirement {
  const found = findTargetRequirement(auth, repository, target);
  if (found === null) throw notFound(repository, `for target ${target}`, target);
  return found;
}

/**
 * An installed definition by its requirement digest, current or not
 * (docs/requirements.md "Compiling a requirement for a subject": the subject names the installed
 * requirement); REQUIREMENT_NOT_FOUND otherwise.
 */
export function getRequirementByDigest(
  auth: Authority,
  repository: string,
  requirementDigest: string,
): StoredRequirement {
  checkRepositoryId(repository);
  checkDigest(requirementDigest, 'requirement digest');
  const row = prepared(auth, 'SELECT * FROM requirements WHERE repository = ? AND requirement_digest = ?').get(
    repository,
    requirementDigest,
  ) as RequirementRow | undefined;
  if (row === undefined) throw notFound(repository, requirementDigest);
  return toStored(row);
}

/**
 * The recipe path of the first command step of the target's installed requirement (the subject
 * context's recipe, docs/checks.md "Several command checks"), or null without a requirement or
 * without a command step. Call inside the caller's transaction.
 */
export function targetSubjectRecipe(auth: Authority, repository: string, target: string): string | null {
  const requirement = findTargetRequirement(auth, repository, target);
  return requirement === null ? null : firstCommandRecipePath(decodeWorkflowDefinition(requirement.definition));
}
