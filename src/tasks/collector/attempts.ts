/**
 * The collector claims the journal retains (table collector_attempts; docs/agent-tasks.md
 * "Collector claims"): one read back with its descriptor decoded and checked against its row, and
 * the live checks of its authorization that qualification, admission and dependency completion
 * share. Read-only: collector-claim.ts writes the rows.
 */
import { AgentscmError } from '../../contracts/errors.js';
import type { GrantOrigin } from '../../contracts/grant.js';
import {
  decodeAnyCollectorDescriptor,
  type AnyCollectorDescriptor,
} from '../../contracts/review/collector-descriptor.js';
import { getRegistration } from '../../native/executor-registry.js';
import { requireLiveOrigin } from '../../native/grants.js';
import type { Authority } from '../../native/store.js';
import { journalStatement, type Journal } from '../../workflows/journal.js';

/** A collector claim as the journal retains it. */
export interface CollectorAttemptRow {
  readonly attempt_id: string;
  readonly task_id: string;
  readonly collector_profile_id: string;
  readonly origin: GrantOrigin;
  readonly upload_request_id: string;
  readonly descriptor: AnyCollectorDescriptor;
  readonly descriptor_bytes: Buffer;
}

interface RawCollectorAttempt {
  attempt_id: string;
  task_id: string;
  collector_profile_id: string;
  origin_owner_id: string;
  origin_agent_id: string;
  grant_id: string;
  grant_generation: string;
  upload_request_id: string;
  descriptor: Buffer;
}

function rowOf(raw: RawCollectorAttempt): CollectorAttemptRow {
  let descriptor: AnyCollectorDescriptor;
  try {
    descriptor = decodeAnyCollectorDescriptor(raw.descriptor);
  } catch (error) {
    throw new AgentscmError(
      'TASK_JOURNAL_INCONSISTENT',
      `the retained descriptor of attempt ${raw.attempt_id} does not decode`,
      { cause: error },
    );
  }
  if (descriptor.attempt.attempt_id !== raw.attempt_id || descriptor.upload_request_id !== raw.upload_request_id) {
    throw new AgentscmError(
      'TASK_JOURNAL_INCONSISTENT',
      `the retained descriptor of attempt ${raw.attempt_id} names another attempt or upload request`,
    );
  }
  return {
    attempt_id: raw.attempt_id,
    task_id: raw.task_id,
    collector_profile_id: raw.collector_profile_id,
    origin: {
      owner_id: raw.origin_owner_id,
      agent_id: raw.origin_agent_id,
      grant_id: raw.grant_id,
      grant_generation: BigInt(raw.grant_generation),
    },
    upload_request_id: raw.upload_request_id,
    descriptor,
    descriptor_bytes: raw.descriptor,
  };
}

const COLUMNS =
  'attempt_id, task_id, collector_profile_id, origin_owner_id, origin_agent_id, grant_id, grant_generation, ' +
  'upload_request_id, descriptor';

/** The collector claim of an attempt, or null. */
export function findCollectorAttempt(journal: Journal, attemptId: string): CollectorAttemptRow | null {
  const raw = journalStatement(journal, `SELECT ${COLUMNS} FROM collector_attempts WHERE attempt_id = ?`).get(
    attemptId,
  ) as RawCollectorAttempt | undefined;
  return raw === undefined ? null : rowOf(raw);
}

/** The collector claim an upload request belongs to, or null. */
export function findCollectorAttemptByUpload(journal: Journal, uploadRequestId: string): CollectorAttemptRow | null {
  const raw = journalStatement(journal, `SELECT ${COLUMNS} FROM collector_attempts WHERE upload_request_id = ?`).get(
    uploadRequestId,
  ) as RawCollectorAttempt | undefined;
  return raw === undefined ? null : rowOf(raw);
}

/**
 * The live origin and executor checks of admission for one collector claim: the origin grant
 * is live at the claimed generation (not revoked, not rotated) and the claimed registration is
 * still current (not revoked, not replaced by a re-enrollment).
 */
export function collectorAuthorizationHolds(auth: Authority, claim: CollectorAttemptRow): boolean {
  try {
    requireLiveOrigin(auth, claim.origin);
    const executor = claim.descriptor.executor;
    const registration = getRegistration(auth, executor.registration_id);
    return (
      registration.current &&
      registration.registration_epoch === executor.registration_epoch &&
      registration.verification_key_id === executor.verification_key_id
    );
  } catch (error) {
    if (error instanceof AgentscmError && (error.code === 'GRANT_NOT_LIVE' || error.code === 'REGISTRATION_NOT_FOUND'))
      return false;
    throw error;
  }
}
