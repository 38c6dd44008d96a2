/**
 * The store side of `agentscm doctor` (docs/doctor.md "store", "keys", "grants", "requirements"):
 * the authority and the journal of a data directory inspected read-only (header, schema version,
 * a bounded PRAGMA quick_check), the privacy of their directories, executor registrations and
 * collector keys, grants and token files, and the requirement of every target. Nothing here
 * creates, migrates or writes a file; a token is never printed.
 */
import { existsSync, lstatSync } from 'node:fs';

import { inspectKeyStateDir } from '../collector/key-store.js';
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import type { HubProfile } from '../hub/config.js';
import { listRegistrations, type RegistrationState } from '../native/executor-registry.js';
import { readTokenFile } from '../native/grant-token-file.js';
import { authenticateToken, listGrants } from '../native/grants.js';
import { AUTHORITY_MIGRATIONS } from '../native/migrations/index.js';
import { getRepository, listRepositories } from '../native/repositories.js';
import { findTargetRequirement } from '../native/requirements.js';
import { inspectDatabase } from '../native/sqlite.js';
import { isStoreInitialized, nativePaths, openAuthority, readTransaction, type Authority } from '../native/store.js';
import { listTargets } from '../native/targets.js';
import { JOURNAL_MIGRATIONS } from '../workflows/journal-migrations/index.js';
import { JOURNAL_WHAT, journalPaths } from '../workflows/journal.js';
import { describeError, finding, passed, type DoctorCode, type DoctorFinding } from './finding.js';

/** quick_check runs on databases up to this size; a larger one is reported as not checked. */
export const MAX_QUICK_CHECK_BYTES = 1024 * 1024 * 1024;
/** At most this many quick_check problems are read and reported. */
export const MAX_QUICK_CHECK_PROBLEMS = 10;

const AUTHORITY_WHAT = 'the native authority';
const RESTORE_FIX =
  'restore the data directory from a backup; agentscm never repairs or re-initializes a damaged database';

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** One database: header, schema version against this build's, bounded quick_check. */
function checkDatabase(check: string, path: string, what: string, expected: number): DoctorFinding {
  let inspection;
  try {
    inspection = inspectDatabase(path, what, {
      maxCheckBytes: MAX_QUICK_CHECK_BYTES,
      maxProblems: MAX_QUICK_CHECK_PROBLEMS,
    });
  } catch (error) {
    const { code, message } = describeError(error);
    if (code === 'STORE_CORRUPT') return finding(check, 'STORE_CORRUPT', message, RESTORE_FIX);
    return finding(
      check,
      'STORE_UNREADABLE',
      `${path} cannot be read: ${code}: ${message}`,
      'run doctor as the user that owns the data directory, and check that the disk and the file are readable',
    );
  }
  const version = inspection.schemaVersion;
  if (version === 0)
    return finding(
      check,
      'STORE_CORRUPT',
      `${what} (${path}) holds no schema although its store is initialized`,
      RESTORE_FIX,
    );
  if (version > expected) {
    return finding(
      check,
      'STORE_SCHEMA_UNSUPPORTED',
      `${what} (${path}) has schema version ${version}; this build knows ${expected}`,
      'use the agentscm build (or a newer one) that wrote this store',
    );
  }
  if (version < expected) {
    return finding(
      check,
      'STORE_SCHEMA_OLD',
      `${what} (${path}) has schema version ${version}; this build writes ${expected}`,
      'run any writing agentscm command of this build against the store (it migrates the schema first); read commands refuse an old schema',
    );
  }
  if (inspection.integrity === 'skipped') {
    return finding(
      check,
      'STORE_CHECK_SKIPPED',
      `${what} (${path}) has schema version ${version} (current); it has ${inspection.bytes} bytes, more than the ${MAX_QUICK_CHECK_BYTES} doctor checks`,
      `check a copy offline: sqlite3 COPY 'PRAGMA quick_check'`,
    );
  }
  if (inspection.integrity !== 'ok') {
    return finding(
      check,
      'STORE_CORRUPT',
      `${what} (${path}) fails PRAGMA quick_check: ${inspection.integrity.join('; ')}`,
      RESTORE_FIX,
    );
  }
  return passed(
    check,
    `${what} (${path}): schema version ${version} (current), quick_check ok, ${inspection.bytes} bytes`,
  );
}

/** Directories of the store that group or others can enter, and files they can read. */
function checkPermissions(dataDir: string): DoctorFinding {
  const open: string[] = [];
  const fixes: string[] = [];
  const native = nativePaths(dataDir);
  const journal = journalPaths(dataDir);
  for (const dir of [native.dir, journal.dir]) {
    let mode: number;
    try {
      const stats = lstatSync(dir);
      if (!stats.isDirectory()) continue;
      mode = stats.mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) !== 0) {
      open.push(`${dir} has mode ${mode.toString(8).padStart(4, '0')}`);
      fixes.push(`chmod 700 ${dir}`);
    }
  }
  if (open.length === 0)
    return passed('store.permissions', `${native.dir} and ${journal.dir} are private to their owner (or absent)`);
  return finding(
    'store.permissions',
    'STORE_PERMISSIONS_OPEN',
    `${open.join('; ')}: group or others can reach the store's files`,
    `run: ${fixes.join('; ')}`,
  );
}

export interface StoreCheck {
  readonly findings: DoctorFinding[];
  /** A read-only authority connection when the store is healthy enough to read; the caller closes it. */
  readonly auth: Authority | null;
}

/** The authority, the journal and their permissions; opens the authority read-only for the later checks. */
export function checkStore(dataDir: string): StoreCheck {
  const paths = nativePaths(dataDir);
  if (!isStoreInitialized(dataDir)) {
    return {
      findings: [
        finding(
          'store',
          'STORE_MISSING',
          `no native store in ${dataDir} (${paths.lock} does not exist); nothing was created`,
          `create one with \`agentscm --data-dir ${dataDir} init-repo PATH --name NAME\`, or pass the store's --data-dir`,
        ),
      ],
      auth: null,
    };
  }
  const findings: DoctorFinding[] = [];
  if (!existsSync(paths.db)) {
    findings.push(
      finding(
        'store',
        'STORE_CORRUPT',
        `${paths.lock} marks the store initialized but ${paths.db} is missing`,
        RESTORE_FIX,
      ),
    );
  } else {
    findings.push(checkDatabase('store', paths.db, AUTHORITY_WHAT, AUTHORITY_MIGRATIONS.length));
  }
  const journal = journalPaths(dataDir);
  if (existsSync(journal.db))
    findings.push(checkDatabase('store.journal', journal.db, JOURNAL_WHAT, JOURNAL_MIGRATIONS.length));
  else
    findings.push(
      finding(
        'store.journal',
        'JOURNAL_ABSENT',
        `${JOURNAL_WHAT} (${journal.db}) does not exist yet`,
        'nothing to do: the first workflow run or collector claim creates it',
      ),
    );
  findings.push(checkPermissions(dataDir));
  let auth: Authority | null = null;
  if (findings[0]?.status === 'pass') {
    try {
      auth = openAuthority(dataDir, { mode: 'read' });
    } catch (error) {
      const { code, message } = describeError(error);
      findings[0] = finding(
        'store',
        'STORE_UNREADABLE',
        `${paths.db} cannot be opened: ${code}: ${message}`,
        'run doctor as the user that owns the data directory',
      );
    }
  }
  return { findings, auth };
}

function allRegistrations(auth: Authority): RegistrationState[] {
  return readTransaction(auth, () =>
    listRepositories(auth).flatMap((repository) => listRegistrations(auth, repository.id)),
  );
}

/** Every executor registration is either current or revoked; a superseded, unrevoked epoch is reported. */
export function checkRegistrations(auth: Authority | null): DoctorFinding[] {
  if (auth === null)
    return [
      finding(
        'keys.registrations',
        'NO_STORE',
        'executor registrations were not checked: the store cannot be read',
        'fix the store findings above first',
      ),
    ];
  const registrations = allRegistrations(auth);
  const current = registrations.filter((r) => r.current).length;
  const revoked = registrations.filter((r) => r.revoked).length;
  const superseded = registrations.filter((r) => !r.current && !r.revoked);
  const findings: DoctorFinding[] = [
    passed(
      'keys.registrations',
      `${plural(registrations.length, 'executor registration')}: ${current} current, ${revoked} revoked, ${superseded.length} superseded and not revoked`,
    ),
  ];
  for (const r of superseded) {
    findings.push(
      finding(
        'keys.registrations',
        'REGISTRATION_SUPERSEDED',
        `registration ${r.registration_id} (profile ${r.profile}, step ${r.step}, executor ${r.executor_id}, epoch ${r.registration_epoch}) is superseded by epoch ${r.latest_epoch} but not revoked`,
        `revoke the old epoch: agentscm agent-task revoke ${r.registration_id} --reason superseded`,
      ),
    );
  }
  return findings;
}

const KEY_STATE_CODES = {
  dir_missing: 'KEY_STATE_DIR_MISSING',
  dir_not_private: 'KEY_STATE_DIR_NOT_PRIVATE',
  key_missing: 'KEY_FILE_MISSING',
  key_not_private: 'KEY_FILE_NOT_PRIVATE',
  key_invalid: 'KEY_FILE_INVALID',
} as const satisfies Record<string, DoctorCode>;

/** Each collector state directory: private, its key file 0600 and valid, its key enrolled and current. */
export function checkKeys(auth: Authority | null, stateDirs: readonly string[]): DoctorFinding[] {
  if (stateDirs.length === 0)
    return [
      finding(
        'keys.state-dir',
        'NOT_REQUESTED',
        'no collector state directory was named',
        'pass --state-dir DIR (repeatable) to check collector keys',
      ),
    ];
  const registrations = auth === null ? null : allRegistrations(auth);
  return stateDirs.map((stateDir): DoctorFinding => {
    const inspection = inspectKeyStateDir(stateDir);
    if (inspection.state !== 'ok') {
      return finding(
        'keys.state-dir',
        KEY_STATE_CODES[inspection.state],
        inspection.problem,
        inspection.hint ?? 'create a key with `agentscm agent-task key --state-dir DIR`',
      );
    }
    const subject = `key ${inspection.keyFile} (verification key ${inspection.verificationKeyId.slice(0, 16)}…)`;
    if (registrations === null)
      return passed(
        'keys.state-dir',
        `${subject} is private and valid; its enrollment was not checked (no readable store)`,
      );
    const mine = registrations.filter((r) => r.verification_key_id === inspection.verificationKeyId);
    const current = mine.find((r) => r.current);
    if (current !== undefined)
      return passed(
        'keys.state-dir',
        `${subject} is private and valid; registration ${current.registration_id} (epoch ${current.registration_epoch}) is current`,
      );
    const enrollFix = `enroll it: agentscm agent-task enroll --profile PROFILE --step STEP --executor EXECUTOR --public-key ${inspection.publicKey}`;
    if (mine.length === 0)
      return finding(
        'keys.state-dir',
        'KEY_NOT_ENROLLED',
        `${subject} is enrolled in no registration of ${auth?.dataDir ?? 'the store'}`,
        enrollFix,
      );
    const revoked = mine.filter((r) => r.revoked);
    if (revoked.length > 0) {
      return finding(
        'keys.state-dir',
        'KEY_REVOKED',
        `${subject}: its registration ${revoked.map((r) => r.registration_id).join(', ')} is revoked and no current registration has it; records it signs are refused`,
        'create a new key in a new state directory (agentscm agent-task key --state-dir NEW_DIR), enroll it, install a collector profile for the new epoch, and delete the old key',
      );
    }
    return finding(
      'keys.state-dir',
      'KEY_SUPERSEDED',
      `${subject}: its registration ${mine.map((r) => r.registration_id).join(', ')} is superseded by a newer epoch`,
      'use the key of the newest epoch, or enroll this key again and install a collector profile for that epoch',
    );
  });
}

/** Where a token file to check was named. */
export interface TokenFileRef {
  readonly path: string;
  /** `--token-file`, or the hook settings file that names it. */
  readonly source: string;
}

const TOKEN_FIX =
  'ask the operator for a grant (`agentscm grant create --actor OWNER/AGENT --token-file FILE`) and use its token file; delete this one';

/** Grants of the store (live, revoked; grants do not expire) and every named token file authenticated. */
export function checkGrants(auth: Authority | null, tokenFiles: readonly TokenFileRef[]): DoctorFinding[] {
  if (auth === null)
    return [
      finding(
        'grants',
        'NO_STORE',
        'grants were not checked: the store cannot be read',
        'fix the store findings above first',
      ),
    ];
  const grants = readTransaction(auth, () => listGrants(auth, null));
  const live = grants.filter((g) => g.state === 'live').length;
  const findings: DoctorFinding[] = [
    passed(
      'grants',
      `${plural(grants.length, 'grant')}: ${live} live, ${grants.length - live} revoked (grants do not expire)`,
    ),
  ];
  if (tokenFiles.length === 0) {
    findings.push(
      finding(
        'grants.token-file',
        'NOT_REQUESTED',
        'no token file was named or found in an installed hook',
        'pass --token-file FILE (repeatable) to check that a token still authenticates',
      ),
    );
    return findings;
  }
  for (const ref of tokenFiles) {
    const subject = `token file ${ref.path} (${ref.source})`;
    let token: string;
    try {
      token = readTokenFile(ref.path);
    } catch (error) {
      const { code, message } = describeError(error);
      findings.push(
        finding(
          'grants.token-file',
          'GRANT_TOKEN_FILE_INVALID',
          `${subject}: ${code}: ${message}`,
          'keep the file written by `agentscm grant create` or `grant rotate` unchanged and private (chmod 600)',
        ),
      );
      continue;
    }
    try {
      const grant = authenticateToken(auth, token);
      findings.push(
        passed(
          'grants.token-file',
          `${subject}: grant ${grant.grant_id} (${grant.scope}, ${grant.owner_id}/${grant.agent_id}) is live at generation ${grant.generation}`,
        ),
      );
    } catch (error) {
      if (!isAgentscmError(error, 'GRANT_TOKEN_REJECTED')) throw error;
      const reason = error.details?.reason;
      const code: DoctorCode =
        reason === 'revoked'
          ? 'GRANT_TOKEN_REVOKED'
          : reason === 'rotated'
            ? 'GRANT_TOKEN_ROTATED'
            : 'GRANT_TOKEN_UNKNOWN';
      const fix =
        reason === 'rotated'
          ? 'use the token file written by the latest `agentscm grant rotate` of this grant; delete this one'
          : TOKEN_FIX;
      findings.push(finding('grants.token-file', code, `${subject}: ${error.message}`, fix));
    }
  }
  return findings;
}

/** Every target of every repository has an installed requirement. */
export function checkRequirements(auth: Authority | null): DoctorFinding[] {
  if (auth === null)
    return [
      finding(
        'requirements',
        'NO_STORE',
        'target requirements were not checked: the store cannot be read',
        'fix the store findings above first',
      ),
    ];
  return readTransaction(auth, () => {
    const findings: DoctorFinding[] = [];
    for (const repository of listRepositories(auth)) {
      for (const target of listTargets(auth, repository.id)) {
        const requirement = findTargetRequirement(auth, repository.id, target.name);
        const subject = `target ${target.name} of ${repository.name} (${repository.id})`;
        if (requirement === null) {
          findings.push(
            finding(
              'requirements',
              'REQUIREMENT_MISSING',
              `${subject} has no installed requirement: nothing is checked before it lands`,
              `install one: agentscm --data-dir ${auth.dataDir} requirement install --repository ${repository.name} --target ${target.name} WORKFLOW.json`,
            ),
          );
        } else {
          findings.push(passed('requirements', `${subject}: requirement ${requirement.requirement_digest} installed`));
        }
      }
    }
    if (findings.length === 0) findings.push(passed('requirements', 'the store has no protected target yet'));
    return findings;
  });
}

/**
 * Each profile of a hub config: its data_dir holds a store with its native repository (else the
 * hub does not start, HUB_PROFILE_UNAVAILABLE), and its target's installed requirement is still the
 * requirement_digest it pins (else every task call is HUB_REQUIREMENT_CHANGED).
 */
export function checkHubProfiles(profiles: readonly HubProfile[]): DoctorFinding[] {
  return profiles.map((profile): DoctorFinding => {
    const subject = `profile ${profile.repositoryId} ${profile.profileId} (data_dir ${profile.dataDir}, target ${profile.target})`;
    const unavailable = (why: string): DoctorFinding =>
      finding(
        'hub.profile',
        'HUB_PROFILE_UNAVAILABLE',
        `${subject}: ${why}; the hub does not start`,
        'point data_dir and native_repository at an existing store and repository (agentscm doctor --data-dir DIR checks the store)',
      );
    if (!isStoreInitialized(profile.dataDir)) return unavailable('no native store');
    let auth: Authority;
    try {
      auth = openAuthority(profile.dataDir, { mode: 'read' });
    } catch (error) {
      const { code, message } = describeError(error);
      return unavailable(`the store cannot be opened: ${code}: ${message}`);
    }
    try {
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
            `${subject} pins requirement ${profile.requirementDigest}, but the target requires ${installed === null ? 'nothing' : installed.requirement_digest}; every task call is refused`,
            'update requirement_digest in the hub config to the installed requirement (agentscm requirement show --target T) and restart the hub',
          );
        }
        return passed(
          'hub.profile',
          `${subject}: the store, repository and pinned requirement ${profile.requirementDigest} are in place`,
        );
      });
    } finally {
      auth.close();
    }
  });
}
