/**
 * Where `agentscm check` keeps a workspace's checks (docs/checks.md "Where the files go"): one
 * skill package in `.agentscm-checks/` (SKILL.md, one recipe or review policy per check) and one
 * workflow definition beside it, `.agentscm-checks/workflow.json`, that holds one step per check.
 * Reading the set back, writing files atomically and restoring them when a later step fails.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { AgentscmError } from '../../contracts/errors.js';
import { decodeWorkflowDefinition, type WorkflowDefinition } from '../../contracts/workflow-definition.js';
import { readDefinitionBytes } from '../definition-file.js';

/** The workspace directory of the checks (a revision path; never `.agentscm/`, which scans skip). */
export const CHECKS_DIR = '.agentscm-checks';
export const CHECKS_SKILL = `${CHECKS_DIR}/SKILL.md`;
export const CHECKS_WORKFLOW = `${CHECKS_DIR}/workflow.json`;
/** The workflow definition's name. */
export const CHECKS_WORKFLOW_NAME = 'checks';
/** A check name: lowercase so that two names never collide on a case-insensitive file system. */
export const CHECK_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const MAX_CHECK_NAME = 63;

export type CheckKind = 'command' | 'review';

/** A check's resource, relative to the skill directory (what the step's runner/policy names). */
export function checkResource(name: string, kind: CheckKind): string {
  return kind === 'command' ? `${name}.runner.json` : `${name}.review-policy.json`;
}

/** The same resource as a workspace (revision) path. */
export function checkResourcePath(name: string, kind: CheckKind): string {
  return `${CHECKS_DIR}/${checkResource(name, kind)}`;
}

export function checkName(name: string): string {
  if (CHECK_NAME_PATTERN.test(name)) return name;
  throw new AgentscmError(
    'CHECK_INVALID',
    `check name ${JSON.stringify(name.slice(0, 80))} is not 1-${MAX_CHECK_NAME} characters of a-z, 0-9, "-" ` +
      'and "_" starting with a letter or digit',
    { hint: 'name the check like a step, e.g. unit-tests', details: { name: name.slice(0, 80) } },
  );
}

/** One check as the workspace's workflow definition holds it. */
export interface CheckEntry {
  readonly name: string;
  readonly kind: CheckKind;
  /** The resource's workspace path. */
  readonly resource: string;
}

/** The workspace's check set: its definition (null when no check was added yet) and checks in order. */
export interface CheckSet {
  readonly definition: WorkflowDefinition | null;
  readonly checks: readonly CheckEntry[];
}

export function readCheckSet(root: string): CheckSet {
  const file = join(root, CHECKS_WORKFLOW);
  if (!existsSync(file)) return { definition: null, checks: [] };
  const definition = decodeWorkflowDefinition(readDefinitionBytes(file));
  const checks = definition.steps.map((step): CheckEntry => {
    const kind = step.action.kind;
    if (kind !== 'command' && kind !== 'review') {
      throw new AgentscmError(
        'CHECK_INVALID',
        `${CHECKS_WORKFLOW} step "${step.id}" is a ${kind} step, which agentscm check does not write`,
        { hint: `keep ${CHECKS_DIR}/ for agentscm check; put other workflows elsewhere` },
      );
    }
    return { name: step.id, kind, resource: checkResourcePath(step.id, kind) };
  });
  return { definition, checks };
}

/** The previous bytes of files about to be written (null: the file did not exist). */
export type FileBackup = ReadonlyMap<string, Buffer | null>;

export function backupFiles(root: string, paths: readonly string[]): FileBackup {
  const backup = new Map<string, Buffer | null>();
  for (const path of paths) {
    const file = join(root, path);
    backup.set(path, existsSync(file) ? readFileSync(file) : null);
  }
  return backup;
}

/** Write through a temporary file and a rename, so a reader sees the old or the new bytes. */
export function writeFileAtomic(root: string, path: string, bytes: string | Uint8Array): void {
  const file = join(root, path);
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes, { mode: 0o644 });
  renameSync(temporary, file);
}

/** Put every backed-up file back as it was (a file that did not exist is removed). */
export function restoreFiles(root: string, backup: FileBackup): void {
  for (const [path, bytes] of backup) {
    if (bytes === null) rmSync(join(root, path), { force: true });
    else writeFileAtomic(root, path, bytes);
  }
}
