/**
 * The `source_paths` step executor: in one read snapshot of the authority, recheck the run's
 * policy epoch and compare the expected paths of the bound revision (docs/skill-workflows.md
 * "Actions"); the result of this pure read is committed crash-safe.
 */
import type { JsonObject } from '../../contracts/json/json-value.js';
import { currentPolicyEpoch } from '../../native/policy.js';
import { readTransaction } from '../../native/store.js';
import type { RunRecord } from '../journal.js';
import type { PlanStep } from '../plan.js';
import { bindingChanged, policyStale } from '../run-errors.js';
import { commitStep, testPause, type Session } from '../run-session.js';
import { checkSourcePaths } from '../source-paths.js';

export async function executeSourcePaths(
  session: Session,
  run: RunRecord,
  step: PlanStep & { action: { kind: 'source_paths' } },
): Promise<void> {
  const startedAt = session.now();
  const result = readTransaction(session.auth, () => {
    const epoch = currentPolicyEpoch(session.auth, run.repository);
    if (epoch !== run.policy_epoch)
      throw bindingChanged(run.run_id, policyStale(run.repository, epoch, run.policy_epoch));
    return checkSourcePaths(session.auth, run.repository, run.revision, step.action.expectations);
  });
  const json: JsonObject = {
    reason: result.reason,
    bytes_read: result.bytes_read,
    observations: result.observations.map((o) => ({
      path: o.path,
      expected_sha256: o.expected_sha256,
      actual_sha256: o.actual_sha256,
      size: o.size,
      outcome: o.outcome,
    })),
  };
  await testPause('before-commit', step.id);
  commitStep(session, step.id, ['pending'], result.state, json, startedAt, false, 'crash-safe');
  await testPause('after-commit', step.id);
}
