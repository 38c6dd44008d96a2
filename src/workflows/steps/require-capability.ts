/**
 * The `require_capability` step executor: assess the capability in this profile and commit the
 * observation crash-safe (docs/skill-workflows.md "Actions").
 */
import type { JsonObject } from '../../contracts/json/json-value.js';
import type { PlanStep } from '../plan.js';
import { assessCapability } from '../require-capability.js';
import { commitStep, testPause, type Session } from '../run-session.js';

export async function executeRequireCapability(
  session: Session,
  step: PlanStep & { action: { kind: 'require_capability' } },
): Promise<void> {
  const startedAt = session.now();
  const observation = assessCapability(step.action.capability);
  const json: JsonObject = {
    capability: observation.capability,
    available: observation.available,
    reason: observation.available ? null : `capability "${observation.capability}" is not available in this profile`,
  };
  await testPause('before-commit', step.id);
  commitStep(
    session,
    step.id,
    ['pending'],
    observation.available ? 'succeeded' : 'unavailable',
    json,
    startedAt,
    false,
    'crash-safe',
  );
  await testPause('after-commit', step.id);
}
