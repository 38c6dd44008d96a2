/**
 * `agent-task profile install` / `profile show` (docs/collector-profiles.md "Installing";
 * docs/wire.md "CollectorProfile v1"). Installing is the operator's separate act that makes one exact
 * enrollment epoch a collector for one repository, workflow profile and command step; enrolling
 * alone never does. In one authority write transaction the profile must name:
 * - the exact current (newest, unrevoked) epoch of a registration bound to the same repository,
 *   workflow profile, step and key;
 * - a command step of a target's installed requirement whose recipe bytes (in the requirement's
 *   pinned skill package) have SHA-256 `recipe_digest`;
 * - as `recipe`, exactly that recipe decoded (same canonical JSON, env in the file's order).
 */
import { commandRecipeDigest, decodeCommandRecipe, RECIPE_LIMITS } from '../../contracts/collector/command-recipe.js';
import { recipeToJson } from '../../contracts/collector/descriptor.js';
import type { CollectorProfile } from '../../contracts/collector/profile.js';
import { AgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { REVIEW_LIMITS, reviewBudgetsToJson } from '../../contracts/review/policy.js';
import {
  anyCollectorProfileToJson,
  decodeAnyCollectorProfile,
  MAX_REVIEW_PROFILE_BYTES,
  type AnyCollectorProfile,
  type ReviewCollectorProfile,
} from '../../contracts/review/profile.js';
import type {
  WorkflowAction,
  WorkflowActionKind,
  WorkflowDefinition,
  WorkflowStepDefinition,
} from '../../contracts/workflow-definition.js';
import { sha256Hex } from '../../crypto/sha256.js';
import { readBoundedInput } from '../../native/bounded-input.js';
import {
  getCollectorProfile,
  profileRegistration,
  resolveCollectorProfileRef,
  storeCollectorProfile,
} from '../../native/collector-profiles.js';
import { getRepository } from '../../native/repositories.js';
import { findTargetRequirement, type TargetRequirement } from '../../native/requirements.js';
import { readRevisionFile } from '../../native/revisions.js';
import type { Store } from '../../native/store-handle.js';
import { readTransaction, writeTransaction, type Authority } from '../../native/store.js';
import { listTargets } from '../../native/targets.js';
import { requirementDefinition } from '../../workflows/requirement.js';
import { layoutSkillPackage, resolvePackagePath } from '../../workflows/skill-package.js';

/** What `profile install` and `profile show` answer. */
export interface CollectorProfileView {
  readonly collector_profile_id: string;
  readonly profile: JsonObject;
  readonly installed_at_ms: number;
  /**
   * The requirement step that binds the recipe (a command profile) or the policy (a finite-review profile); install
   * only, null for show.
   */
  readonly bound_by: {
    readonly target: string;
    readonly requirement_digest: string;
    readonly recipe_path?: string;
    readonly policy_path?: string;
  } | null;
  /** Whether the registration is still the newest unrevoked epoch of its scope (read now). */
  readonly registration_current: boolean;
}

export interface InstallProfileResult extends CollectorProfileView {
  /** False when exactly this profile was installed before; nothing changed. */
  readonly installed: boolean;
}

/** A step of a target's current requirement with the profile's step id and action kind. */
interface StepCandidate<K extends WorkflowActionKind> {
  readonly target: { readonly name: string };
  readonly requirement: TargetRequirement;
  readonly definition: WorkflowDefinition;
  readonly step: WorkflowStepDefinition;
  readonly action: Extract<WorkflowAction, { kind: K }>;
}

/**
 * Every target's current requirement whose step `profile.step_id` has an action of `kind`;
 * a step of another kind is noted in `seen` (for the refusal) and skipped.
 */
function* stepsOfKind<K extends WorkflowActionKind>(
  auth: Authority,
  profile: AnyCollectorProfile,
  kind: K,
  seen: string[],
): Generator<StepCandidate<K>> {
  for (const target of listTargets(auth, profile.repository_id)) {
    const requirement = findTargetRequirement(auth, profile.repository_id, target.name);
    if (requirement === null) continue;
    const definition = requirementDefinition(requirement);
    const step = definition.steps.find((s) => s.id === profile.step_id);
    if (step === undefined) continue;
    if (step.action.kind !== kind) {
      seen.push(`target ${target.name}: step "${step.id}" is a ${step.action.kind} step`);
      continue;
    }
    yield { target, requirement, definition, step, action: step.action as Extract<WorkflowAction, { kind: K }> };
  }
}

interface RecipeBinding {
  readonly target: string;
  readonly requirement_digest: string;
  readonly recipe_path: string;
  readonly bytes: Buffer;
}

/**
 * The command step of a target's current requirement that binds the profile's recipe_digest:
 * its recipe bytes are read from the requirement's pinned revision (the skill package every
 * subject must reproduce byte for byte). COLLECTOR_PROFILE_STEP_INVALID when no target has one.
 */
function findRecipeBinding(auth: Authority, profile: CollectorProfile): RecipeBinding {
  const seen: string[] = [];
  for (const { target, requirement, definition, step, action } of stepsOfKind(auth, profile, 'command', seen)) {
    const recipePath = resolvePackagePath(layoutSkillPackage(definition.skill), action.runner);
    const bytes = readRevisionFile(auth, profile.repository_id, requirement.revision, recipePath, {
      maxBytes: RECIPE_LIMITS.maxRecipeBytes,
    });
    const digest = commandRecipeDigest(bytes);
    if (digest === profile.recipe_digest)
      return {
        target: target.name,
        requirement_digest: requirement.requirement_digest,
        recipe_path: recipePath,
        bytes,
      };
    seen.push(`target ${target.name}: step "${step.id}" binds recipe ${digest}`);
  }
  throw new AgentscmError(
    'COLLECTOR_PROFILE_STEP_INVALID',
    `no installed requirement of repository ${profile.repository_id} has a command step "${profile.step_id}" ` +
      `binding recipe ${profile.recipe_digest}${seen.length === 0 ? '' : ` (${seen.join('; ')})`}`,
    {
      hint:
        'name a command step of an installed requirement and the SHA-256 of its recipe file (requirement show ' +
        'lists the steps)',
      details: { step_id: profile.step_id },
    },
  );
}

interface PolicyBinding {
  readonly target: string;
  readonly requirement_digest: string;
  readonly policy_path: string;
}

/**
 * The review step of a target's current requirement that the finite-review profile fits: same
 * step id, a review action whose policy bytes (in the requirement's pinned revision) have SHA-256
 * `policy_sha256`, and exactly the profile's coverage and budgets. COLLECTOR_PROFILE_STEP_INVALID
 * when no target has one.
 */
function findPolicyBinding(auth: Authority, profile: ReviewCollectorProfile): PolicyBinding {
  const seen: string[] = [];
  for (const { target, requirement, definition, step, action } of stepsOfKind(auth, profile, 'review', seen)) {
    const policyPath = resolvePackagePath(layoutSkillPackage(definition.skill), action.policy);
    const digest = sha256Hex(
      readRevisionFile(auth, profile.repository_id, requirement.revision, policyPath, {
        maxBytes: REVIEW_LIMITS.maxPolicyBytes,
      }),
    );
    if (digest !== profile.policy_sha256) seen.push(`target ${target.name}: step "${step.id}" binds policy ${digest}`);
    else if (
      action.coverage.length !== profile.coverage.length ||
      action.coverage.some((path, i) => path !== profile.coverage[i])
    )
      seen.push(`target ${target.name}: step "${step.id}" covers other paths`);
    else if (
      !encodeCanonical(reviewBudgetsToJson(action.budgets)).equals(
        encodeCanonical(reviewBudgetsToJson(profile.budgets)),
      )
    )
      seen.push(`target ${target.name}: step "${step.id}" has other budgets`);
    else return { target: target.name, requirement_digest: requirement.requirement_digest, policy_path: policyPath };
  }
  throw new AgentscmError(
    'COLLECTOR_PROFILE_STEP_INVALID',
    `no installed requirement of repository ${profile.repository_id} has a review step "${profile.step_id}" ` +
      `binding policy ${profile.policy_sha256} with the profile's coverage and budgets` +
      (seen.length === 0 ? '' : ` (${seen.join('; ')})`),
    {
      hint:
        'name a review step of an installed requirement, the SHA-256 of its policy file, and its coverage and ' +
        'budgets exactly (requirement show lists the steps)',
      details: { step_id: profile.step_id },
    },
  );
}

function viewOf(auth: Authority, id: string, bound: RecipeBinding | PolicyBinding | null): CollectorProfileView {
  const installed = getCollectorProfile(auth, id);
  const registration = profileRegistration(auth, installed.profile, false);
  return {
    collector_profile_id: installed.collector_profile_id,
    profile: anyCollectorProfileToJson(installed.profile),
    installed_at_ms: installed.installed_at_ms,
    bound_by:
      bound === null
        ? null
        : 'policy_path' in bound
          ? { target: bound.target, requirement_digest: bound.requirement_digest, policy_path: bound.policy_path }
          : { target: bound.target, requirement_digest: bound.requirement_digest, recipe_path: bound.recipe_path },
    registration_current:
      registration.current && registration.registration_epoch === installed.profile.registration_epoch,
  };
}

/** Check a decoded profile against the authority and install it (one write transaction). */
export function installCollectorProfile(
  auth: Authority,
  profile: AnyCollectorProfile,
  nowMs: number,
): InstallProfileResult {
  return writeTransaction(auth, () => {
    getRepository(auth, profile.repository_id);
    profileRegistration(auth, profile, true);
    if (profile.kind === 'finite_review') {
      const bound = findPolicyBinding(auth, profile);
      const stored = storeCollectorProfile(auth, profile, nowMs);
      return { ...viewOf(auth, stored.profile.collector_profile_id, bound), installed: stored.installed };
    }
    const bound = findRecipeBinding(auth, profile);
    const recipe = decodeCommandRecipe(bound.bytes);
    if (
      !Buffer.from(encodeCanonical(recipeToJson(recipe))).equals(
        Buffer.from(encodeCanonical(recipeToJson(profile.recipe))),
      )
    ) {
      throw new AgentscmError(
        'COLLECTOR_PROFILE_RECIPE_MISMATCH',
        `the profile's recipe is not the recipe ${profile.recipe_digest} (${bound.recipe_path}) decoded`,
        {
          hint: 'copy the recipe file into the profile unchanged (same fields, values and env order)',
          details: { recipe_path: bound.recipe_path },
        },
      );
    }
    const stored = storeCollectorProfile(auth, profile, nowMs);
    return { ...viewOf(auth, stored.profile.collector_profile_id, bound), installed: stored.installed };
  });
}

/** `agentscm agent-task profile install FILE`: read (bounded, regular file), decode strictly, check, install. */
export function installCollectorProfileFile(store: Store, file: string, nowMs: number): InstallProfileResult {
  const profile = decodeAnyCollectorProfile(
    readBoundedInput(file, {
      limit: MAX_REVIEW_PROFILE_BYTES,
      what: 'the collector profile',
      missingHint: 'pass the path of a CollectorProfile JSON file (docs/collector-profiles.md)',
      tooLargeHint:
        'a command profile holds one recipe and its bindings (at most 80 KiB); a finite-review profile its pins ' +
        'and coverage (at most 256 KiB)',
    }),
  );
  return installCollectorProfile(store.authority(), profile, nowMs);
}

/** `agentscm agent-task profile show ID` (read-only). */
export function showCollectorProfile(store: Store, profileId: string): CollectorProfileView {
  const auth = store.authority();
  return readTransaction(auth, () => viewOf(auth, resolveCollectorProfileRef(auth, profileId), null));
}
