/**
 * Recompile a collector descriptor against the exact authority
 * (docs/collect.md "What collect checks against the authority": the collector works only from the
 * server-derived claimed descriptor matching that installed profile, and rechecks authenticated
 * status before dispatch and before signing). Every field must equal what the authority holds now:
 * its id, the installed profile and its current registration (epoch and key), the recipe and
 * runtime identity the profile pins, the retained task and its active attempt (digests, fence,
 * execution operation, actor, executor), the subject, and the live origin grant that the token
 * authenticates. A field that differs is COLLECT_DESCRIPTOR_MISMATCH naming it; a descriptor that
 * was right but is no longer current keeps the state machine's own codes (TASK_STALE,
 * TASK_FENCE_STALE, TASK_ATTEMPT_NOT_ACTIVE, REGISTRATION_NOT_CURRENT, GRANT_TOKEN_REJECTED,
 * GRANT_NOT_LIVE). Read-only: nothing is changed in the authority or the journal.
 */
import { commandRecipeDigest, RECIPE_LIMITS, type CommandRecipe } from '../contracts/collector/command-recipe.js';
import { recipeToJson, type CollectorDescriptor } from '../contracts/collector/descriptor.js';
import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { AnyCollectorDescriptor, ReviewCollectorDescriptor } from '../contracts/review/collector-descriptor.js';
import { REVIEW_LIMITS, reviewActionToJson, reviewBudgetsToJson } from '../contracts/review/policy.js';
import type { AnyCollectorProfile } from '../contracts/review/profile.js';
import { sha256Hex } from '../crypto/sha256.js';
import { authorityId } from '../native/authority-identity.js';
import { requireCurrentCollectorProfile } from '../native/collector-profiles.js';
import { authenticateToken, requireLiveOrigin, type LiveGrant } from '../native/grants.js';
import { findTargetRequirement } from '../native/requirements.js';
import { readRevisionFile } from '../native/revisions.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction, type Authority } from '../native/store.js';
import { findTaskWithAttempt } from '../tasks/attempt-rows.js';
import { findCollectorAttempt } from '../tasks/collector/attempts.js';
import { requireCurrentSubject } from '../tasks/derive.js';
import { journalRead, type Journal } from '../workflows/journal.js';
import { requirementDefinition } from '../workflows/requirement.js';
import { layoutSkillPackage, resolvePackagePath } from '../workflows/skill-package.js';
import { refuseStaleDeps, revisionLockfileReader } from './deps-lockfile.js';

/** What the authority binds beyond the descriptor: the step, its recipe file and the grant. */
export interface AuthorityBinding {
  readonly stepId: string;
  readonly target: string;
  readonly recipePath: string;
  readonly recipeDigest: string;
  readonly recipe: CommandRecipe;
  readonly grant: LiveGrant;
}

function mismatch(field: string, held: unknown, given: unknown): AgentscmError {
  const show = (value: unknown): string =>
    (typeof value === 'bigint' ? value.toString() : (JSON.stringify(value) ?? 'null')).slice(0, 200);
  return new AgentscmError(
    'COLLECT_DESCRIPTOR_MISMATCH',
    `the descriptor's ${field} is ${show(given)}, the authority holds ${show(held)}`,
    {
      hint:
        'collect only from the descriptor `agent-task claim --out` wrote for this authority; claim again to ' +
        'get a current one',
      details: { field },
    },
  );
}

function same(field: string, held: unknown, given: unknown): void {
  if (held !== given) throw mismatch(field, held, given);
}

/** The installed profile of the descriptor, current, with the bindings every kind shares. */
function checkProfileBindings(auth: Authority, descriptor: AnyCollectorDescriptor): AnyCollectorProfile {
  const { installed, registration } = requireCurrentCollectorProfile(auth, descriptor.collector_profile_id);
  const profile = installed.profile;
  same('repository_id', profile.repository_id, descriptor.repository_id);
  same('workflow_profile', profile.workflow_profile, descriptor.workflow_profile);
  same('executor.registration_id', profile.registration_id, descriptor.executor.registration_id);
  same('executor.executor_id', registration.executor_id, descriptor.executor.executor_id);
  same('executor.registration_epoch', profile.registration_epoch, descriptor.executor.registration_epoch);
  same('executor.verification_key_id', profile.verification_key_id, descriptor.executor.verification_key_id);
  return profile;
}

function checkProfile(auth: Authority, descriptor: CollectorDescriptor): { stepId: string; recipeDigest: string } {
  const profile = checkProfileBindings(auth, descriptor);
  if (profile.kind !== 'command')
    throw mismatch('collector_profile_id', 'a finite-review profile', 'a command descriptor');
  same('runtime_identity_digest', profile.runtime_identity_digest, descriptor.runtime_identity_digest);
  const held = encodeCanonical(recipeToJson(profile.recipe)).toString('utf8');
  const given = encodeCanonical(recipeToJson(descriptor.recipe)).toString('utf8');
  if (held !== given) throw mismatch('recipe', 'the recipe of the installed profile', 'another recipe');
  return { stepId: profile.step_id, recipeDigest: profile.recipe_digest };
}

function checkRecipeFile(
  auth: Authority,
  descriptor: CollectorDescriptor,
  stepId: string,
  recipeDigest: string,
): string {
  const { subject } = descriptor;
  const requirement = findTargetRequirement(auth, descriptor.repository_id, subject.target);
  if (requirement === null) throw mismatch('subject.target', 'no installed requirement', subject.target);
  const step = requirementDefinition(requirement).steps.find((s) => s.id === stepId);
  if (step?.action.kind !== 'command')
    throw mismatch(
      'collector_profile_id',
      `a requirement without command step "${stepId}"`,
      descriptor.collector_profile_id,
    );
  const recipePath = resolvePackagePath(
    layoutSkillPackage(requirementDefinition(requirement).skill),
    step.action.runner,
  );
  const bytes = readRevisionFile(auth, descriptor.repository_id, subject.revision, recipePath, {
    maxBytes: RECIPE_LIMITS.maxRecipeBytes,
  });
  const digest = commandRecipeDigest(bytes);
  if (digest !== recipeDigest) {
    throw new AgentscmError(
      'RECIPE_DIGEST_MISMATCH',
      `recipe ${recipePath} in revision ${subject.revision} has SHA-256 ${digest}, the collector profile pins ` +
        `${recipeDigest}`,
      {
        hint: 'the revision under test must carry the recipe file the profile binds, byte for byte',
      },
    );
  }
  return recipePath;
}

function checkTask(auth: Authority, journal: Journal, descriptor: AnyCollectorDescriptor, stepId: string): void {
  const found = findTaskWithAttempt(journal, descriptor.task.task_id, descriptor.attempt.attempt_id);
  if (found === null) throw mismatch('task.task_id', 'no retained task by that id', descriptor.task.task_id);
  same('task.task_digest', found.task.digest, descriptor.task.task_digest);
  const { subject } = found.task.task;
  const given = descriptor.subject;
  same('repository_id', subject.repository, descriptor.repository_id);
  same('workflow_profile', subject.profile, descriptor.workflow_profile);
  same('collector_profile_id (its step)', subject.step_id, stepId);
  same('subject.change_id', subject.change_id, given.change_id);
  same('subject.change_version', subject.change_version, given.change_version);
  same('subject.revision', subject.revision, given.revision);
  same('subject.context_digest', subject.context_digest, given.context_digest);
  same('subject.policy_epoch', subject.policy_epoch, given.policy_epoch);
  same('subject.target', subject.target, given.target);
  same('subject.requirement_digest', subject.requirement_digest, given.requirement_digest);
  if (found.attempt === null) {
    throw new AgentscmError(
      'TASK_ATTEMPT_NOT_FOUND',
      `task ${descriptor.task.task_id} has no attempt ${descriptor.attempt.attempt_id}`,
      {
        hint: 'claim the task again for a current descriptor',
      },
    );
  }
  const retained = found.attempt();
  const attempt = retained.attempt;
  same('attempt.attempt_digest', retained.digest, descriptor.attempt.attempt_digest);
  same('attempt.fence', attempt.fence, descriptor.attempt.fence);
  same('attempt.execution_operation_id', attempt.execution_operation_id, descriptor.attempt.execution_operation_id);
  same('origin.owner_id', attempt.agent.owner_id, descriptor.origin.owner_id);
  same('origin.agent_id', attempt.agent.agent_id, descriptor.origin.agent_id);
  if (attempt.executor !== null) {
    same('executor.registration_id', attempt.executor.registration_id, descriptor.executor.registration_id);
    same('executor.registration_epoch', attempt.executor.registration_epoch, descriptor.executor.registration_epoch);
    same('executor.verification_key_id', attempt.executor.verification_key_id, descriptor.executor.verification_key_id);
  }
  // The claim recorded which profile, origin grant and upload request this attempt collects for.
  const claim = findCollectorAttempt(journal, attempt.attempt_id);
  if (claim === null)
    throw mismatch(
      'attempt.attempt_id',
      'an attempt claimed without a collector profile (claim, not collector_claim)',
      attempt.attempt_id,
    );
  same('collector_profile_id', claim.collector_profile_id, descriptor.collector_profile_id);
  same('upload_request_id', claim.upload_request_id, descriptor.upload_request_id);
  same('origin.grant_id', claim.origin.grant_id, descriptor.origin.grant_id);
  same('origin.grant_generation', claim.origin.grant_generation, descriptor.origin.grant_generation);
  if (found.task.last_fence !== attempt.fence) {
    throw new AgentscmError(
      'TASK_FENCE_STALE',
      `attempt ${attempt.attempt_id} holds fence ${attempt.fence}; the task's current fence is ` +
        `${found.task.last_fence}`,
      {
        hint: 'the attempt was superseded; claim again for a current descriptor',
      },
    );
  }
  if (retained.state !== 'active') {
    throw new AgentscmError(
      'TASK_ATTEMPT_NOT_ACTIVE',
      `attempt ${attempt.attempt_id} is ${retained.state}; a collection needs the live attempt`,
      {
        hint: 'claim the task again for a current descriptor',
      },
    );
  }
  requireCurrentSubject(auth, subject);
}

/**
 * Check the bindings every descriptor has, then `body`, in one read snapshot of the store's
 * authority and journal.
 */
function withChecked<T>(
  store: Store,
  descriptor: AnyCollectorDescriptor,
  token: string,
  body: (auth: Authority, journal: Journal, grant: LiveGrant) => T,
): T {
  const auth = store.authority();
  const journal = store.requireJournal();
  return readTransaction(auth, () =>
    journalRead(journal, () => {
      same('authority_id', authorityId(auth), descriptor.authority_id);
      const grant = authenticateToken(auth, token);
      const { origin } = descriptor;
      if (
        grant.grant_id !== origin.grant_id ||
        grant.generation !== origin.grant_generation ||
        grant.owner_id !== origin.owner_id ||
        grant.agent_id !== origin.agent_id
      ) {
        throw new AgentscmError(
          'COLLECT_ORIGIN_MISMATCH',
          `the token authenticates grant ${grant.grant_id} generation ${grant.generation} ` +
            `(${grant.owner_id}/${grant.agent_id}), not the origin grant ${origin.grant_id} generation ` +
            `${origin.grant_generation} (${origin.owner_id}/${origin.agent_id}) the descriptor names`,
          {
            hint: 'pass the token file of the grant that claimed the task',
          },
        );
      }
      same('repository_id', grant.repository, descriptor.repository_id);
      requireLiveOrigin(auth, origin);
      return body(auth, journal, grant);
    }),
  );
}

/**
 * Check `descriptor` against the store's authority, as the grant whose `token` the caller
 * holds (see module comment). Run before dispatch and again before signing.
 */
export function checkDescriptorAgainstAuthority(
  store: Store,
  descriptor: CollectorDescriptor,
  token: string,
): AuthorityBinding {
  return withChecked(store, descriptor, token, (auth, journal, grant) => {
    const { stepId, recipeDigest } = checkProfile(auth, descriptor);
    checkTask(auth, journal, descriptor, stepId);
    const recipePath = checkRecipeFile(auth, descriptor, stepId, recipeDigest);
    return { stepId, target: descriptor.subject.target, recipePath, recipeDigest, recipe: descriptor.recipe, grant };
  });
}

/** What the authority binds for a review collection: the step and the exact policy bytes. */
export interface ReviewAuthorityBinding {
  readonly stepId: string;
  readonly policyBytes: Buffer;
  readonly grant: LiveGrant;
}

/**
 * The review descriptor's check (docs/review.md "Collecting a review"): the common bindings, the
 * finite-review profile's transport, policy, coverage and budgets, the task and attempt, and the
 * step's review in the installed requirement — its policy path, the policy's exact bytes at the
 * subject's revision and the declared action — exactly as the descriptor carries them.
 */
export function checkReviewDescriptorAgainstAuthority(
  store: Store,
  descriptor: ReviewCollectorDescriptor,
  token: string,
): ReviewAuthorityBinding {
  return withChecked(store, descriptor, token, (auth, journal, grant) => {
    const profile = checkProfileBindings(auth, descriptor);
    if (profile.kind !== 'finite_review')
      throw mismatch('collector_profile_id', 'a command profile', 'a review descriptor');
    const pinned = profile.transport;
    same('transport.executable_sha256', pinned.executable_sha256, descriptor.transport.executable_sha256);
    same('transport.provider_scope', pinned.provider_scope, descriptor.transport.provider_scope);
    same('transport.model', pinned.model, descriptor.transport.model);
    same('review.policy_sha256', profile.policy_sha256, descriptor.review.policy_sha256);
    same(
      'review.action.coverage',
      encodeCanonical([...profile.coverage]).toString('utf8'),
      encodeCanonical([...descriptor.review.action.coverage]).toString('utf8'),
    );
    same(
      'review.action.budgets',
      encodeCanonical(reviewBudgetsToJson(profile.budgets)).toString('utf8'),
      encodeCanonical(reviewBudgetsToJson(descriptor.review.action.budgets)).toString('utf8'),
    );
    checkTask(auth, journal, descriptor, profile.step_id);
    const { subject } = descriptor;
    const requirement = findTargetRequirement(auth, descriptor.repository_id, subject.target);
    if (requirement === null) throw mismatch('subject.target', 'no installed requirement', subject.target);
    const definition = requirementDefinition(requirement);
    const step = definition.steps.find((s) => s.id === profile.step_id);
    if (step?.action.kind !== 'review')
      throw mismatch(
        'collector_profile_id',
        `a requirement without review step "${profile.step_id}"`,
        descriptor.collector_profile_id,
      );
    same(
      'review.policy_path',
      resolvePackagePath(layoutSkillPackage(definition.skill), step.action.policy),
      descriptor.review.policy_path,
    );
    same(
      'review.action',
      encodeCanonical(reviewActionToJson(step.action)).toString('utf8'),
      encodeCanonical(reviewActionToJson(descriptor.review.action)).toString('utf8'),
    );
    const policyBytes = readRevisionFile(
      auth,
      descriptor.repository_id,
      subject.revision,
      descriptor.review.policy_path,
      { maxBytes: REVIEW_LIMITS.maxPolicyBytes },
    );
    same(
      'review.policy_sha256 (the policy file at the revision)',
      sha256Hex(policyBytes),
      descriptor.review.policy_sha256,
    );
    return { stepId: profile.step_id, policyBytes, grant };
  });
}

/**
 * Before any container runs: a recipe on a dependency image runs only on a revision whose
 * lockfile is the one the image was built from (docs/deps.md "A changed lockfile").
 */
export function refuseStaleDepsOf(
  store: Store,
  descriptor: CollectorDescriptor,
  stepId: string,
  labels: Readonly<Record<string, string>>,
): void {
  const auth = store.authority();
  const read = revisionLockfileReader(auth, descriptor.repository_id, descriptor.subject.revision);
  readTransaction(auth, () => refuseStaleDeps(stepId, descriptor.recipe, labels, read));
}
