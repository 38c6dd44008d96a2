/**
 * Runs of one exact compiled plan: the retained workflow runs that ran a plan at a revision and
 * policy epoch of a repository, newest first. Admission reads them for the server-executed path
 * (docs/admission.md "The server-executed path") and for a required review that a run passed
 * (docs/admission.md "Review at landing").
 */
import { u64ToSql } from '../native/sqlite.js';
import { journalStatement, type Journal } from './journal.js';

/** What selects the runs of one exact plan. */
export interface PlanBinding {
  readonly plan_digest: string;
  readonly repository: string;
  readonly revision: string;
  readonly policy_epoch: bigint;
}

/** At most this many runs are read (the newest). */
export const PLAN_RUNS_LIMIT = 8;

const ALL_RUNS =
  'SELECT run_id FROM workflow_runs WHERE plan_digest = ? AND repository = ? AND revision = ? AND policy_epoch = ? ' +
  'ORDER BY updated_at_ms DESC, run_id LIMIT 8';
const COMPLETED_RUNS =
  'SELECT run_id FROM workflow_runs WHERE plan_digest = ? AND repository = ? AND revision = ? AND policy_epoch = ? ' +
  "AND state IN ('completed', 'completed_with_omissions') ORDER BY updated_at_ms DESC, run_id LIMIT 8";

/**
 * The ids of the newest runs (at most `PLAN_RUNS_LIMIT`) of the plan, newest first (ties by run
 * id); with `completed`, only runs in state completed or completed_with_omissions.
 */
export function listPlanRunIds(
  journal: Journal,
  plan: PlanBinding,
  options: { readonly completed: boolean },
): string[] {
  const rows = journalStatement(journal, options.completed ? COMPLETED_RUNS : ALL_RUNS).all(
    plan.plan_digest,
    plan.repository,
    plan.revision,
    u64ToSql(plan.policy_epoch),
  ) as { run_id: string }[];
  return rows.map((row) => row.run_id);
}
