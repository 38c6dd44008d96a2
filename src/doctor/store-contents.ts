/**
 * What `agentscm doctor` reads in the authority (docs/doctor.md "keys", "grants", "requirements"):
 * executor registrations and collector keys, grants and token files, and the requirement of every
 * target. Nothing here writes; a token is never printed.
 */
import { inspectKeyStateDir } from '../collector/key-store.js';
import { isAgentscmError } from '../contracts/errors.js';
import { listRegistrations, type RegistrationState } from '../native/executor-registry.js';
import { readTokenFile } from '../native/grant-token-file.js';
import { authenticateToken, listGrants } from '../native/grants.js';
import { listRepositories } from '../native/repositories.js';
import { findTargetRequirement } from '../native/requirements.js';
import { readTransaction, type Authority } from '../native/store.js';
import { listTargets } from '../native/targets.js';
import { describeError, finding, passed, type DoctorCode, type DoctorFinding } from './finding.js';

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
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
      `${plural(registrations.length, 'executor registration')}: ${current} current, ${revoked} revoked, ` +
        `${superseded.length} superseded and not revoked`,
    ),
  ];
  for (const r of superseded) {
    findings.push(
      finding(
        'keys.registrations',
        'REGISTRATION_SUPERSEDED',
        `registration ${r.registration_id} (profile ${r.profile}, step ${r.step}, executor ${r.executor_id}, epoch ` +
          `${r.registration_epoch}) is superseded by epoch ${r.latest_epoch} but not revoked`,
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
        `${subject} is private and valid; registration ${current.registration_id} (epoch ` +
          `${current.registration_epoch}) is current`,
      );
    const enrollFix =
      'enroll it: agentscm agent-task enroll --profile PROFILE --step STEP --executor EXECUTOR ' +
      `--public-key ${inspection.publicKey}`;
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
        `${subject}: its registration ${revoked.map((r) => r.registration_id).join(', ')} is revoked and no ` +
          'current registration has it; records it signs are refused',
        'create a new key in a new state directory (agentscm agent-task key --state-dir NEW_DIR), enroll it, ' +
          'install a collector profile for the new epoch, and delete the old key',
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
  'ask the operator for a grant (`agentscm grant create --actor OWNER/AGENT --token-file FILE`) and use its token ' +
  'file; delete this one';

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
          `${subject}: grant ${grant.grant_id} (${grant.scope}, ${grant.owner_id}/${grant.agent_id}) is live at ` +
            `generation ${grant.generation}`,
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
              `install one: agentscm --data-dir ${auth.dataDir} requirement install --repository ` +
                `${repository.name} --target ${target.name} WORKFLOW.json`,
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
