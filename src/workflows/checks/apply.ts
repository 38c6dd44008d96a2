/**
 * One change to a workspace's check set, all or nothing (docs/checks.md "What check add does"):
 * write the skill files, checkpoint them as the checks Change, create the command/v1 context of
 * each command step, write the workflow definition bound to that revision and install it as the
 * target's requirement. When any step fails, every file written is put back as it was and the
 * installed requirement is untouched (the install is the last step and one transaction).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { AgentscmError } from '../../contracts/errors.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import type { ReviewAction } from '../../contracts/review/policy.js';
import {
  workflowDefinitionToJson,
  type WorkflowDefinition,
  type WorkflowStepDefinition,
} from '../../contracts/workflow-definition.js';
import { currentPolicyEpoch } from '../../native/policy.js';
import { createReviewContext } from '../../native/review-contexts.js';
import type { Store } from '../../native/store-handle.js';
import { readTransaction } from '../../native/store.js';
import { listTargets } from '../../native/targets.js';
import { checkpointWorkspace } from '../../workspace/checkpoint.js';
import { addExcludePatterns, EXCLUDE_FILE_LABEL } from '../../workspace/exclude.js';
import { readWorkspaceStatus } from '../../workspace/status.js';
import { installRequirementFile } from '../requirement.js';
import {
  backupFiles,
  checkResource,
  checkResourcePath,
  CHECKS_DIR,
  CHECKS_SKILL,
  CHECKS_WORKFLOW,
  CHECKS_WORKFLOW_NAME,
  restoreFiles,
  writeFileAtomic,
  type CheckKind,
} from './layout.js';

/** A check of the set after the change; a review check carries its action. */
export interface PlannedCheck {
  readonly name: string;
  readonly kind: CheckKind;
  readonly review?: ReviewAction;
}

export interface ApplyInput {
  readonly root: string;
  readonly repository: string;
  readonly target: string;
  readonly change: string;
  readonly checks: readonly PlannedCheck[];
  /** Files to write (bytes) or remove (null), as workspace paths. */
  readonly files: ReadonlyMap<string, Uint8Array | null>;
}

export interface ApplyResult {
  readonly change: string;
  readonly version: bigint;
  readonly revision: string;
  readonly requirement_digest: string;
  readonly changed: boolean;
}

/**
 * Refuse before anything is written: the workspace must hold no edit outside .agentscm-checks/
 * (the checkpoint records the whole tree, so it would land in the checks Change) and the target
 * must exist.
 */
export function checkPreconditions(store: Store, root: string, target: string): { repository: string } {
  const status = readWorkspaceStatus(store, { workspace: root });
  const unrelated = status.changes.filter((c) => !c.path.startsWith(`${CHECKS_DIR}/`)).map((c) => c.path);
  if (unrelated.length > 0) {
    throw new AgentscmError(
      'CHECKS_WORKSPACE_DIRTY',
      `the workspace has ${unrelated.length} edit(s) outside ${CHECKS_DIR}/ (first: ${unrelated[0] ?? ''})`,
      {
        hint: 'checkpoint them under their own Change first (agentscm checkpoint --change ID), or undo them',
        details: { paths: unrelated.slice(0, 20) },
      },
    );
  }
  const auth = store.authority();
  const targets = readTransaction(auth, () => listTargets(auth, status.repository).map((t) => t.name));
  if (!targets.includes(target)) {
    throw new AgentscmError('TARGET_NOT_FOUND', `the repository has no target ${JSON.stringify(target)}`, {
      hint: targets.length === 0 ? 'the repository has no targets' : `its targets: ${targets.join(', ')}`,
    });
  }
  return { repository: status.repository };
}

/** SKILL.md of the checks package: what each check is and where its resource is. */
export function skillMarkdown(checks: readonly PlannedCheck[]): string {
  const lines = checks.map(
    (c) => `- \`${c.name}\` (${c.kind}): ${checkResource(c.name, c.kind)}` + (c.kind === 'review' ? ' (policy)' : ''),
  );
  return [
    '---',
    'name: agentscm-checks',
    'description: the checks a protected target requires, one workflow step per check',
    '---',
    '',
    '# Checks',
    '',
    'Written by `agentscm check add` and `agentscm check remove` (docs/checks.md); change them with',
    'those commands, not by hand: the installed requirement pins these exact bytes.',
    '',
    ...lines,
    '',
  ].join('\n');
}

function definitionOf(
  input: ApplyInput,
  source: { revision: string; policyEpoch: bigint; version: bigint },
  contexts: ReadonlyMap<string, string>,
): WorkflowDefinition {
  const steps = input.checks.map((check): WorkflowStepDefinition => {
    const base = { id: check.name, needs: [], required: true };
    if (check.kind === 'review') {
      if (check.review === undefined) throw new Error(`review check ${check.name} has no action`);
      return { ...base, action: check.review };
    }
    return {
      ...base,
      action: {
        kind: 'command',
        runner: checkResource(check.name, 'command'),
        change: { repository: input.repository, id: input.change },
        change_version: source.version,
        context_digest: contexts.get(check.name) ?? '',
      },
    };
  });
  return {
    version: 1,
    name: CHECKS_WORKFLOW_NAME,
    source: { repository: input.repository, revision: source.revision, policy_epoch: source.policyEpoch },
    skill: {
      entrypoint: CHECKS_SKILL,
      resources: input.checks.map((c) => checkResourcePath(c.name, c.kind)).sort(),
    },
    steps,
  };
}

/** Write, checkpoint, bind, install; on any failure restore every file and rethrow. */
export function applyCheckSet(store: Store, input: ApplyInput): ApplyResult {
  const { root } = input;
  const backup = backupFiles(root, [...input.files.keys(), CHECKS_SKILL, CHECKS_WORKFLOW, EXCLUDE_FILE_LABEL]);
  try {
    // workflow.json names the contexts of the version this checkpoint records, so it is written
    // after it and never recorded: excluded, it leaves the workspace clean (docs/checks.md).
    addExcludePatterns(root, [`/${CHECKS_WORKFLOW}`]);
    for (const [path, bytes] of input.files) {
      if (bytes === null) rmSync(join(root, path), { force: true });
      else writeFileAtomic(root, path, bytes);
    }
    writeFileAtomic(root, CHECKS_SKILL, skillMarkdown(input.checks));
    const checkpoint = checkpointWorkspace(store, { change: input.change, workspace: root });
    const auth = store.authority();
    const contexts = new Map<string, string>();
    for (const check of input.checks) {
      if (check.kind !== 'command') continue;
      const created = createReviewContext(auth, {
        repository: input.repository,
        changeId: input.change,
        runnerPath: checkResourcePath(check.name, 'command'),
      });
      contexts.set(check.name, created.context_digest);
    }
    const policyEpoch = readTransaction(auth, () => currentPolicyEpoch(auth, input.repository));
    const definition = definitionOf(
      input,
      { revision: checkpoint.revision, policyEpoch, version: checkpoint.version },
      contexts,
    );
    writeFileAtomic(root, CHECKS_WORKFLOW, `${formatJson(workflowDefinitionToJson(definition))}\n`);
    const installed = installRequirementFile(store, {
      target: input.target,
      file: join(root, CHECKS_WORKFLOW),
    });
    return {
      change: input.change,
      version: checkpoint.version,
      revision: checkpoint.revision,
      requirement_digest: installed.requirement_digest,
      changed: installed.changed,
    };
  } catch (error) {
    restoreFiles(root, backup);
    throw error;
  }
}
