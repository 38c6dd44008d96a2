/**
 * Installed collector profiles (docs/collector-profiles.md "Installing": installing a profile is a
 * separate act and never silently promotes an ordinary executor; profiles are immutable). The
 * authority keeps each profile's exact canonical bytes under its collector_profile_id. Installation
 * checks live in src/tasks/collector/profiles.ts (they compile the installed requirement); this
 * module stores, reads and checks currency.
 */
import type { CollectorProfile } from '../contracts/collector/profile.js';
import { AgentscmError } from '../contracts/errors.js';
import { validateDigestHex } from '../contracts/ids.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import {
  anyCollectorProfileId,
  anyCollectorProfileToJson,
  decodeAnyCollectorProfile,
  type AnyCollectorProfile,
} from '../contracts/review/profile.js';
import { getRegistration, type RegistrationState } from './executor-registry.js';
import { prefixRange, resolveHexPrefix } from './prefixes.js';
import { prepared, readTransaction, writeTransaction, type Authority } from './store.js';

/** A profile as installed. */
export interface InstalledCollectorProfile {
  readonly collector_profile_id: string;
  readonly profile: AnyCollectorProfile;
  /** The exact canonical bytes the id digests. */
  readonly canonical: Buffer;
  readonly installed_at_ms: number;
}

/** An installed command profile (it pins a recipe and a runtime identity). */
export type InstalledCommandProfile = InstalledCollectorProfile & { readonly profile: CollectorProfile };

export function isInstalledCommandProfile(installed: InstalledCollectorProfile): installed is InstalledCommandProfile {
  return installed.profile.kind === 'command';
}

interface ProfileRow {
  collector_profile_id: string;
  canonical: Buffer;
  installed_at_ms: number;
}

function installedOf(row: ProfileRow): InstalledCollectorProfile {
  let profile: AnyCollectorProfile;
  try {
    profile = decodeAnyCollectorProfile(row.canonical);
  } catch (error) {
    throw new AgentscmError(
      'STORE_CORRUPT',
      `collector profile ${row.collector_profile_id} does not decode from its stored bytes`,
      { cause: error },
    );
  }
  if (
    anyCollectorProfileId(profile) !== row.collector_profile_id ||
    !Buffer.from(encodeCanonical(anyCollectorProfileToJson(profile))).equals(row.canonical)
  ) {
    throw new AgentscmError(
      'STORE_CORRUPT',
      `collector profile ${row.collector_profile_id} does not match its stored bytes`,
    );
  }
  return {
    collector_profile_id: row.collector_profile_id,
    profile,
    canonical: row.canonical,
    installed_at_ms: row.installed_at_ms,
  };
}

/** An installed profile, or null. */
export function findCollectorProfile(auth: Authority, profileId: string): InstalledCollectorProfile | null {
  validateDigestHex(profileId, 'collector profile id');
  return readTransaction(auth, () => {
    const row = prepared(
      auth,
      'SELECT collector_profile_id, canonical, installed_at_ms FROM collector_profiles WHERE collector_profile_id = ?',
    ).get(profileId) as ProfileRow | undefined;
    return row === undefined ? null : installedOf(row);
  });
}

/**
 * The full collector_profile_id that `reference` names: the full 64-hex id or a unique prefix of
 * at least 8 hex digits of an installed profile (docs/cli.md "Prefixes").
 */
export function resolveCollectorProfileRef(auth: Authority, reference: string): string {
  return resolveHexPrefix(reference, {
    what: 'collector profile',
    notFound: 'COLLECTOR_PROFILE_NOT_FOUND',
    listHint: '`agentscm agent-task profile install` prints the collector_profile_id',
    candidates: (prefix) => {
      const [low, high] = prefixRange(prefix);
      const row = prepared(
        auth,
        'SELECT count(*) AS n, min(collector_profile_id) AS first FROM collector_profiles WHERE ' +
          'collector_profile_id >= ? AND collector_profile_id < ?',
      ).get(low, high) as {
        n: number;
        first: string | null;
      };
      return { count: row.n, first: row.first };
    },
  });
}

/** An installed profile (COLLECTOR_PROFILE_NOT_FOUND). */
export function getCollectorProfile(auth: Authority, profileId: string): InstalledCollectorProfile {
  const found = findCollectorProfile(auth, profileId);
  if (found === null) {
    throw new AgentscmError('COLLECTOR_PROFILE_NOT_FOUND', `no collector profile ${profileId} is installed`, {
      hint:
        'install one with `agentscm agent-task profile install FILE`; enrollment alone never makes an ' +
        'executor a collector',
    });
  }
  return found;
}

/** Every profile installed for a registration, oldest first (an enrollment without one is never a collector). */
export function listProfilesOfRegistration(auth: Authority, registrationId: string): InstalledCollectorProfile[] {
  return readTransaction(auth, () =>
    (
      prepared(
        auth,
        'SELECT collector_profile_id, canonical, installed_at_ms FROM collector_profiles WHERE ' +
          'registration_id = ? ORDER BY seq',
      ).all(registrationId) as ProfileRow[]
    ).map(installedOf),
  );
}

/**
 * Every installed profile of the store, oldest first (`agentscm doctor` checks the images and runtime identities they
 * pin).
 */
export function listCollectorProfiles(auth: Authority): InstalledCollectorProfile[] {
  return readTransaction(auth, () =>
    (
      prepared(
        auth,
        'SELECT collector_profile_id, canonical, installed_at_ms FROM collector_profiles ORDER BY seq',
      ).all() as ProfileRow[]
    ).map(installedOf),
  );
}

/**
 * Store a profile whose bindings the caller checked in this write transaction; installing the
 * same profile again changes nothing (`installed` false).
 */
export function storeCollectorProfile(
  auth: Authority,
  profile: AnyCollectorProfile,
  nowMs: number,
): { readonly installed: boolean; readonly profile: InstalledCollectorProfile } {
  const id = anyCollectorProfileId(profile);
  const canonical = Buffer.from(encodeCanonical(anyCollectorProfileToJson(profile)));
  return writeTransaction(auth, () => {
    const existing = findCollectorProfile(auth, id);
    if (existing !== null) return { installed: false, profile: existing };
    const seq = (
      prepared(auth, 'SELECT coalesce(max(seq), 0) + 1 AS next FROM collector_profiles').get() as { next: number }
    ).next;
    prepared(
      auth,
      `INSERT INTO collector_profiles (collector_profile_id, repository, workflow_profile, step, registration_id,
        canonical, installed_at_ms, seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      profile.repository_id,
      profile.workflow_profile,
      profile.step_id,
      profile.registration_id,
      canonical,
      nowMs,
      seq,
    );
    return { installed: true, profile: getCollectorProfile(auth, id) };
  });
}

/**
 * The profile's registration, checked against its bindings: same repository, workflow profile,
 * step, epoch and key (COLLECTOR_PROFILE_BINDING_MISMATCH), and — with `requireCurrent` — still
 * the newest unrevoked epoch of its scope (REGISTRATION_NOT_CURRENT). Run it inside the
 * caller's authority transaction.
 */
export function profileRegistration(
  auth: Authority,
  profile: AnyCollectorProfile,
  requireCurrent: boolean,
): RegistrationState {
  const registration = getRegistration(auth, profile.registration_id);
  const differences: string[] = [];
  if (registration.repository !== profile.repository_id) differences.push(`repository ${registration.repository}`);
  if (registration.profile !== profile.workflow_profile) differences.push(`workflow profile ${registration.profile}`);
  if (registration.step !== profile.step_id) differences.push(`step ${registration.step}`);
  if (registration.registration_epoch !== profile.registration_epoch)
    differences.push(`epoch ${registration.registration_epoch}`);
  if (registration.verification_key_id !== profile.verification_key_id)
    differences.push(`verification key ${registration.verification_key_id}`);
  if (differences.length > 0) {
    throw new AgentscmError(
      'COLLECTOR_PROFILE_BINDING_MISMATCH',
      `registration ${profile.registration_id} is bound to ${differences.join(', ')}, not what the profile names`,
      {
        hint:
          'copy repository_id, workflow_profile, step_id, registration_epoch and verification_key_id from ' +
          '`agent-task enroll`',
        details: { registration_id: profile.registration_id },
      },
    );
  }
  if (requireCurrent && !registration.current) {
    throw new AgentscmError(
      'REGISTRATION_NOT_CURRENT',
      `executor registration ${profile.registration_id} is not current: ` +
        `${registration.revoked ? 'it was revoked' : `superseded by epoch ${registration.latest_epoch}`}`,
      {
        hint:
          'a profile binds the exact current registration epoch; enroll again and install a profile for ' +
          'the new epoch',
        details: { registration_id: profile.registration_id },
      },
    );
  }
  return registration;
}

/**
 * An installed profile whose registration is still current (spec: collection and import need the
 * current profile and executor registration): COLLECTOR_PROFILE_NOT_FOUND or
 * REGISTRATION_NOT_CURRENT otherwise. Run it inside the caller's authority transaction.
 */
export function requireCurrentCollectorProfile(
  auth: Authority,
  profileId: string,
): { readonly installed: InstalledCollectorProfile; readonly registration: RegistrationState } {
  const installed = getCollectorProfile(auth, profileId);
  return { installed, registration: profileRegistration(auth, installed.profile, true) };
}
