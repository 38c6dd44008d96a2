/** The hub profiles of a hub config as `agentscm doctor` checks them (docs/doctor.md "hub"). */
import { AgentscmError } from '../contracts/errors.js';
import type { HubProfile } from '../hub/config.js';
import { getRepository } from '../native/repositories.js';
import { findTargetRequirement } from '../native/requirements.js';
import type { Store } from '../native/store-handle.js';
import { isStoreInitialized, readTransaction, type Authority } from '../native/store.js';
import { describeError, finding, passed, type DoctorFinding } from './finding.js';

/**
 * A profile of a hub config, read through its read-only Store: its data_dir holds a store with its
 * native repository (else the hub does not start, HUB_PROFILE_UNAVAILABLE), and its target's
 * installed requirement is still the requirement_digest it pins (else every task call is
 * HUB_REQUIREMENT_CHANGED).
 */
export function checkHubProfile(profile: HubProfile, store: Store): DoctorFinding {
  const subject =
    `profile ${profile.repositoryId} ${profile.profileId} (data_dir ${profile.dataDir}, target ` + `${profile.target})`;
  const unavailable = (why: string): DoctorFinding =>
    finding(
      'hub.profile',
      'HUB_PROFILE_UNAVAILABLE',
      `${subject}: ${why}; the hub does not start`,
      'point data_dir and native_repository at an existing store and repository (agentscm doctor --data-dir DIR ' +
        'checks the store)',
    );
  if (!isStoreInitialized(store.dataDir)) return unavailable('no native store');
  let auth: Authority;
  try {
    auth = store.authority();
  } catch (error) {
    const { code, message } = describeError(error);
    return unavailable(`the store cannot be opened: ${code}: ${message}`);
  }
  return readTransaction(auth, () => {
    try {
      getRepository(auth, profile.nativeRepository);
    } catch (error) {
      if (error instanceof AgentscmError && error.code === 'REPOSITORY_NOT_FOUND')
        return unavailable(`the store has no repository ${profile.nativeRepository}`);
      throw error;
    }
    const installed = findTargetRequirement(auth, profile.nativeRepository, profile.target);
    if (installed?.requirement_digest !== profile.requirementDigest) {
      return finding(
        'hub.profile',
        'HUB_REQUIREMENT_CHANGED',
        `${subject} pins requirement ${profile.requirementDigest}, but the target requires ` +
          `${installed === null ? 'nothing' : installed.requirement_digest}; every task call is refused`,
        'update requirement_digest in the hub config to the installed requirement (agentscm requirement show ' +
          '--target T) and restart the hub',
      );
    }
    return passed(
      'hub.profile',
      `${subject}: the store, repository and pinned requirement ${profile.requirementDigest} are in place`,
    );
  });
}
