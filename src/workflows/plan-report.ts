/**
 * `skill-workflow plan FILE`: validate a definition against the read-only authority and report
 * its plan and skill identities, running nothing (docs/skill-workflows.md "Identities").
 */
import type { Store } from '../native/store-handle.js';
import { readDefinitionFile } from './definition-file.js';
import { compileWorkflow, type CompiledPlan } from './plan.js';

export interface PlanReport {
  readonly name: string;
  readonly plan_digest: string;
  readonly skill_digest: string;
  readonly source: { readonly repository: string; readonly revision: string; readonly policy_epoch: bigint };
  readonly skill: {
    readonly entrypoint: string;
    readonly entries: readonly { readonly path: string; readonly sha256: string; readonly size: number }[];
  };
  /** Execution order. */
  readonly steps: readonly {
    readonly position: number;
    readonly id: string;
    readonly kind: string;
    readonly required: boolean;
    readonly needs: readonly string[];
  }[];
  readonly admission: 'not_assessed';
}

/** The report of a compiled plan (also used by requirement show). */
export function planReportOf(plan: CompiledPlan): PlanReport {
  return {
    name: plan.name,
    plan_digest: plan.digest,
    skill_digest: plan.skill.digest,
    source: {
      repository: plan.source.repository,
      revision: plan.source.revision,
      policy_epoch: plan.source.policy_epoch,
    },
    skill: {
      entrypoint: plan.skill.entrypoint,
      entries: plan.skill.entries.map((e) => ({ path: e.path, sha256: e.sha256, size: e.size })),
    },
    steps: plan.steps.map((s) => ({
      position: s.position,
      id: s.id,
      kind: s.action.kind,
      required: s.required,
      needs: [...s.needs],
    })),
    admission: 'not_assessed',
  };
}

/** Compile a definition file against the store's authority (nothing is created or written). */
export function planWorkflowFile(store: Store, file: string): PlanReport {
  const { definition } = readDefinitionFile(file);
  return planReportOf(compileWorkflow(store.authority(), definition));
}
