/**
 * Which installed collector profile an agent's claim uses when it names none (docs/agent-tasks.md
 * "agent-task claim"): the profiles of the grant's repository whose registration is current (newest
 * epoch, not revoked), narrowed to `--step` when given; for each step the newest installed one.
 * Exactly one step left → its profile; none → COLLECTOR_PROFILE_NOT_FOUND; more →
 * COLLECTOR_PROFILE_AMBIGUOUS listing the steps, so an agent never claims under a guess.
 */
import { AgentscmError } from '../../contracts/errors.js';
import { listCollectorProfiles, type InstalledCollectorProfile } from '../../native/collector-profiles.js';
import { getRegistration } from '../../native/executor-registry.js';
import type { Store } from '../../native/store-handle.js';
import { readTransaction } from '../../native/store.js';

export interface ProfileSelection {
  /** The repository id of the grant the claim acts under. */
  readonly repository: string;
  /** `--step`: only that step's profile. */
  readonly step?: string | undefined;
}

/** The newest current profile of each step of `repository` (installation order, oldest step first). */
export function currentProfilesByStep(store: Store, repository: string): Map<string, InstalledCollectorProfile> {
  const auth = store.authority();
  return readTransaction(auth, () => {
    const byStep = new Map<string, InstalledCollectorProfile>();
    for (const installed of listCollectorProfiles(auth)) {
      const profile = installed.profile;
      if (profile.repository_id !== repository) continue;
      if (!getRegistration(auth, profile.registration_id).current) continue;
      byStep.delete(profile.step_id); // keep the newest, in the order of its installation
      byStep.set(profile.step_id, installed);
    }
    return byStep;
  });
}

/** The profile a claim without `--profile` uses (see the module comment). */
export function selectCollectorProfile(store: Store, selection: ProfileSelection): InstalledCollectorProfile {
  const byStep = currentProfilesByStep(store, selection.repository);
  if (selection.step !== undefined) {
    const found = byStep.get(selection.step);
    if (found !== undefined) return found;
    throw new AgentscmError(
      'COLLECTOR_PROFILE_NOT_FOUND',
      `no collector profile with a current registration is installed for step "${selection.step}"`,
      {
        hint:
          byStep.size === 0
            ? 'the operator installs one with `agentscm agent-task collector add --step STEP --state-dir DIR`'
            : `steps with a profile: ${[...byStep.keys()].join(', ')}`,
      },
    );
  }
  const only = byStep.size === 1 ? [...byStep.values()][0] : undefined;
  if (only !== undefined) return only;
  if (byStep.size === 0) {
    throw new AgentscmError(
      'COLLECTOR_PROFILE_NOT_FOUND',
      "no collector profile with a current registration is installed for the grant's repository",
      { hint: 'the operator installs one with `agentscm agent-task collector add --step STEP --state-dir DIR`' },
    );
  }
  const steps = [...byStep.keys()];
  throw new AgentscmError(
    'COLLECTOR_PROFILE_AMBIGUOUS',
    `collector profiles are installed for ${steps.length} steps (${steps.join(', ')}); say which one`,
    {
      hint: 'pass --step STEP or --profile ID',
      details: {
        steps: [...byStep.entries()].map(([step, p]) => ({ step, collector_profile_id: p.collector_profile_id })),
      },
    },
  );
}
