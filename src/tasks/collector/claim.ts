/**
 * `collector_claim` and `collector_descriptor` (docs/agent-tasks.md "Collector claims": the
 * server-derived claimed descriptor matching the installed profile; docs/wire.md "Collector
 * descriptor"). A collector claim is a phase-two claim
 * (request id, fence, lease, older-subject scan, fresh execution identity: operations.ts) of a
 * command task under an installed collector profile whose registration is current; the
 * executor binding is the profile's, never the request's. In the same journal transaction it
 * records on the attempt the profile, the originating grant and its generation, a fresh
 * upload_request_id and the exact descriptor bytes, and answers the descriptor. An identical
 * retry answers the retained bytes.
 */
import {
  collectorClaimRequestDecoder,
  collectorDescriptorRequestDecoder,
  type CollectorClaimRequest,
  type CollectorDescriptorRequest,
} from '../../contracts/collector/requests.js';
import { domainDigest, mutationDomain } from '../../contracts/digest.js';
import { AgentscmError } from '../../contracts/errors.js';
import type { GrantOrigin } from '../../contracts/grant.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../contracts/json/json-value.js';
import { anyDescriptorToJson, type AnyCollectorDescriptor } from '../../contracts/review/collector-descriptor.js';
import { reviewBudgetsToJson } from '../../contracts/review/policy.js';
import { sameAgent, type ExecutorBinding } from '../../contracts/task/common.js';
import type { TaskClaimRequest } from '../../contracts/task/requests.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { authorityId } from '../../native/authority-identity.js';
import {
  getCollectorProfile,
  requireCurrentCollectorProfile,
  type InstalledCollectorProfile,
} from '../../native/collector-profiles.js';
import type { Authority } from '../../native/store.js';
import { journalStatement } from '../../workflows/journal.js';
import type { TaskContext } from '../context.js';
import type { DerivedTask } from '../derive.js';
import { requireActor } from '../operations/checks.js';
import { claimOperation, type ClaimAnswer } from '../operations/claim.js';
import { readAuthority, readJournal, type TransitionScope } from '../transition.js';
import { findCollectorAttempt, type CollectorAttemptRow } from './attempts.js';

export { collectorClaimRequestDecoder, collectorDescriptorRequestDecoder };
export type { CollectorClaimRequest, CollectorDescriptorRequest };

/**
 * A collector claim's answer: the claim's answer (ClaimAnswer) with its own status and the
 * descriptor the collector is given (its wire encoding). An object type, so it is a JSON value.
 */
export type CollectorClaimAnswer = Omit<ClaimAnswer, 'status'> & {
  readonly status: 'collector_claimed';
  readonly descriptor: JsonObject;
};

function collectorClaimToJson(request: CollectorClaimRequest): JsonObject {
  return {
    version: request.version,
    request_id: request.request_id,
    agent: { owner_id: request.agent.owner_id, agent_id: request.agent.agent_id },
    collector_profile_id: request.collector_profile_id,
    task_id: request.task_id,
    task_digest: request.task_digest,
    execution_operation_id: request.execution_operation_id,
    requested_lease_ms: request.requested_lease_ms,
  };
}

/** The digest a collector claim's request id is bound to (its own domain: never equal to a plain claim's). */
export function collectorClaimDigest(request: CollectorClaimRequest): string {
  return domainDigest(mutationDomain('collector_claim'), encodeCanonical(collectorClaimToJson(request)));
}

/** The upload request id of an attempt: fresh per attempt, derived so that a claim retry names the same one. */
export function uploadRequestIdOf(attemptDigest: string): string {
  return `u-${sha256Hex(encodeCanonical(['agentscm.collector-upload-request.v1', attemptDigest])).slice(0, 40)}`;
}

function executorOf(installed: InstalledCollectorProfile, executorId: string): ExecutorBinding {
  const p = installed.profile;
  return {
    registration_id: p.registration_id,
    executor_id: executorId,
    registration_epoch: p.registration_epoch,
    verification_key_id: p.verification_key_id,
  };
}

/**
 * The profile must be for this task: same repository, workflow profile and step; a command
 * profile needs a command step binding the same recipe, a finite-review profile a review step
 * binding the same policy, coverage and budgets.
 */
function requireProfileFitsTask(installed: InstalledCollectorProfile, entry: DerivedTask): void {
  const p = installed.profile;
  const s = entry.task.subject;
  const differences: string[] = [];
  if (p.repository_id !== s.repository) differences.push(`repository ${s.repository}`);
  if (p.workflow_profile !== s.profile) differences.push(`workflow profile ${s.profile}`);
  if (p.step_id !== s.step_id) differences.push(`step ${s.step_id}`);
  const action = entry.step.action;
  if (p.kind === 'command') {
    if (action.kind !== 'command') differences.push(`a ${action.kind} step`);
    else if (action.recipe_sha256 !== p.recipe_digest) differences.push(`recipe ${action.recipe_sha256}`);
  } else if (action.kind !== 'review') {
    differences.push(`a ${action.kind} step`);
  } else {
    if (action.policy_sha256 !== p.policy_sha256) differences.push(`policy ${action.policy_sha256}`);
    if (action.coverage.length !== p.coverage.length || action.coverage.some((path, i) => path !== p.coverage[i]))
      differences.push('another coverage');
    if (!encodeCanonical(reviewBudgetsToJson(action.budgets)).equals(encodeCanonical(reviewBudgetsToJson(p.budgets))))
      differences.push('other budgets');
  }
  if (differences.length > 0) {
    throw new AgentscmError(
      'COLLECTOR_CLAIM_PROFILE_MISMATCH',
      `collector profile ${installed.collector_profile_id} does not fit task ${entry.task.task_id}: the task has ` +
        `${differences.join(', ')}`,
      {
        hint:
          'claim the task of the step the profile binds (requirements lists the tasks), or install a profile ' +
          'for this step',
        details: { collector_profile_id: installed.collector_profile_id, task_id: entry.task.task_id },
      },
    );
  }
}

function requireOrigin(ctx: TaskContext): GrantOrigin {
  if (ctx.origin === undefined) {
    throw new AgentscmError('TASK_NOT_AUTHORIZED', 'a collector claim records its originating grant and needs one', {
      hint: 'call it with --token-file of an agent grant',
    });
  }
  return ctx.origin.origin;
}

/** `collector_claim` (see the module comment). */
export function collectorClaimOperation(ctx: TaskContext, request: CollectorClaimRequest): JsonValue {
  requireActor(ctx, request.agent);
  const origin = requireOrigin(ctx);
  const profileAt = (auth: Authority) => requireCurrentCollectorProfile(auth, request.collector_profile_id);
  const { installed, registration } = readAuthority(ctx, (auth) =>
    ctx.guard(ctx.actor, 'collector_claim', () => profileAt(auth)),
  );
  const claim: TaskClaimRequest = {
    version: 1,
    request_id: request.request_id,
    task_id: request.task_id,
    task_digest: request.task_digest,
    execution_operation_id: request.execution_operation_id,
    agent: request.agent,
    executor: executorOf(installed, registration.executor_id),
    requested_lease_ms: request.requested_lease_ms,
  };
  return claimOperation(ctx, claim, {
    operation: 'collector_claim',
    digest: collectorClaimDigest(request),
    check: (entry) => requireProfileFitsTask(installed, entry),
    recheck: (scope) => {
      const now = profileAt(scope.auth);
      if (now.installed.collector_profile_id !== installed.collector_profile_id)
        throw new AgentscmError('INTERNAL', 'the profile changed inside its transaction');
    },
    claimsReview: installed.profile.kind === 'finite_review',
    extend: (scope, claimed, response): CollectorClaimAnswer => {
      const common = {
        version: 1 as const,
        authority_id: authorityId(scope.auth),
        repository_id: installed.profile.repository_id,
        workflow_profile: installed.profile.workflow_profile,
        collector_profile_id: installed.collector_profile_id,
        task: { task_id: claimed.entry.task.task_id, task_digest: claimed.entry.digest },
        attempt: {
          attempt_id: claimed.attempt.attempt_id,
          attempt_digest: claimed.attempt_digest,
          fence: claimed.attempt.fence,
          execution_operation_id: claimed.attempt.execution_operation_id,
          lease_expires_at_ms: BigInt(claimed.lease_expires_at_ms),
        },
        subject: {
          change_id: claimed.entry.task.subject.change_id,
          change_version: claimed.entry.task.subject.change_version,
          revision: claimed.entry.task.subject.revision,
          context_digest: claimed.entry.task.subject.context_digest,
          policy_epoch: claimed.entry.task.subject.policy_epoch,
          target: claimed.entry.task.subject.target,
          requirement_digest: claimed.entry.task.subject.requirement_digest,
        },
        origin,
        executor: executorOf(installed, registration.executor_id),
      };
      const profile = installed.profile;
      const action = claimed.entry.step.action;
      let descriptor: AnyCollectorDescriptor;
      if (profile.kind === 'command') {
        descriptor = {
          ...common,
          recipe: profile.recipe,
          runtime_identity_digest: profile.runtime_identity_digest,
          upload_request_id: uploadRequestIdOf(claimed.attempt_digest),
        };
      } else {
        if (action.kind !== 'review') throw new AgentscmError('INTERNAL', 'a finite-review claim names a review task');
        const { policy_path, policy_sha256, ...declared } = action;
        descriptor = {
          ...common,
          review: { policy_path, policy_sha256, action: declared },
          transport: {
            basis: 'claude-code',
            executable_sha256: profile.transport.executable_sha256,
            provider_scope: profile.transport.provider_scope,
            model: profile.transport.model,
          },
          upload_request_id: uploadRequestIdOf(claimed.attempt_digest),
        };
      }
      insertCollectorAttempt(scope, descriptor);
      return { ...response, status: 'collector_claimed', descriptor: anyDescriptorToJson(descriptor) };
    },
  });
}

// ------------------------------------------- the collector attempt row (read back in attempts.ts)

function insertCollectorAttempt(scope: TransitionScope, descriptor: AnyCollectorDescriptor): void {
  const bytes = encodeCanonical(anyDescriptorToJson(descriptor));
  journalStatement(
    scope.journal,
    `INSERT INTO collector_attempts (attempt_id, task_id, collector_profile_id, origin_owner_id, origin_agent_id,
      grant_id, grant_generation, upload_request_id, descriptor, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    descriptor.attempt.attempt_id,
    descriptor.task.task_id,
    descriptor.collector_profile_id,
    descriptor.origin.owner_id,
    descriptor.origin.agent_id,
    descriptor.origin.grant_id,
    descriptor.origin.grant_generation.toString().padStart(20, '0'),
    descriptor.upload_request_id,
    bytes,
    scope.nowMs,
  );
}

/**
 * `collector_descriptor`: re-read the descriptor of an earlier collector claim, exactly as the
 * claim answered it (read-only; the holder only, within the grant's repository).
 */
export function collectorDescriptorOperation(ctx: TaskContext, request: CollectorDescriptorRequest): JsonValue {
  requireActor(ctx, request.agent);
  return ctx.guard(ctx.actor, 'collector_descriptor', () =>
    readJournal(
      ctx,
      () => {
        throw notFound(request.task_id, request.attempt_id);
      },
      (journal) => {
        const row = findCollectorAttempt(journal, request.attempt_id);
        if (row === null || row.task_id !== request.task_id) throw notFound(request.task_id, request.attempt_id);
        if (ctx.origin !== undefined && row.descriptor.repository_id !== ctx.origin.repository) {
          throw new AgentscmError(
            'TASK_NOT_AUTHORIZED',
            `attempt ${request.attempt_id} belongs to repository ${row.descriptor.repository_id}, not the grant's`,
            { hint: "use a grant for the task's repository" },
          );
        }
        if (!sameAgent({ owner_id: row.origin.owner_id, agent_id: row.origin.agent_id }, ctx.actor)) {
          throw new AgentscmError(
            'TASK_ACTOR_MISMATCH',
            `attempt ${request.attempt_id} was claimed by ${row.origin.owner_id}/${row.origin.agent_id}`,
            { hint: 'only the claiming actor re-reads its descriptor' },
          );
        }
        return anyDescriptorToJson(row.descriptor);
      },
    ),
  );
}

function notFound(taskId: string, attemptId: string): AgentscmError {
  return new AgentscmError(
    'COLLECTOR_ATTEMPT_NOT_FOUND',
    `no collector claim is retained for task ${taskId} attempt ${attemptId}`,
    {
      hint: 'claim the task with collector_claim (agent-task claim --profile); a plain claim has no descriptor',
      details: { task_id: taskId, attempt_id: attemptId },
    },
  );
}

/** The installed profile of a collector claim (read through the caller's authority connection). */
export function claimProfile(auth: Authority, row: CollectorAttemptRow): InstalledCollectorProfile {
  return getCollectorProfile(auth, row.collector_profile_id);
}
