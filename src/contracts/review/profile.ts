/**
 * The finite-review CollectorProfile (docs/review.md "The finite-review collector profile": "A
 * finite-review profile pins the executable digest, provider scope, Claude Code transport basis,
 * model, installed policy digest, required path coverage and finite budgets. Fixture and
 * unqualified HTTP bases are rejected at installation, import and native admission. Every
 * recorded reservation and observation must use the pinned basis. Candidate data cannot select an
 * executable, provider, model, credential, budget, image or fallback."). Like the command
 * profile it binds one exact registration epoch, repository, workflow profile and step; its
 * identity is the `agentscm.collector-profile.v1` digest of its canonical JSON (its `kind`
 * keeps it apart from every command profile). Pure.
 */
import {
  collectorProfileToJson,
  decodeCollectorProfile,
  PROFILE_BINDING_PROPERTIES,
  type CollectorProfile,
} from '../collector/profile.js';
import { digestCanonical, DOMAINS } from '../digest.js';
import { AgentscmError } from '../errors.js';
import { isJsonObject, type JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { parseStrictJson } from '../json/strict-json.js';
import { MAX_RELATIVE_PATH_BYTES } from '../paths.js';
import { HEX64_SCHEMA, ID_SCHEMA } from '../task/common.js';
import {
  checkReviewAction,
  REVIEW_BUDGETS_SCHEMA,
  REVIEW_LIMITS,
  reviewBudgetsToJson,
  type ReviewBudgets,
} from './policy.js';
import type { ReviewRecord } from './record.js';
import { transportIdentityToJson, type ReviewTransportIdentity } from './request.js';

export const REVIEW_PROFILE_VERSION = 1;
export const MAX_REVIEW_PROFILE_BYTES = 256 * 1024;

/** The only basis a profile may pin (docs/review.md "Transports"). */
export const QUALIFIED_BASIS = 'claude-code';

export interface ReviewCollectorProfile {
  readonly version: 1;
  readonly kind: 'finite_review';
  readonly repository_id: string;
  readonly workflow_profile: string;
  readonly step_id: string;
  readonly registration_id: string;
  readonly registration_epoch: bigint;
  readonly verification_key_id: string;
  /** The pinned transport: basis claude-code, the executable's SHA-256, provider scope, model. */
  readonly transport: ReviewTransportIdentity & { readonly executable_sha256: string };
  /** SHA-256 of the installed policy resource's exact bytes. */
  readonly policy_sha256: string;
  /** The paths the review must cover, as the step's action names them. */
  readonly coverage: readonly string[];
  readonly budgets: ReviewBudgets;
}

const PATH = { type: 'string', minLength: 1, maxLength: MAX_RELATIVE_PATH_BYTES } as const;

/** The published JSON Schema (docs/schemas/agent-task.review-collector-profile.schema.json). */
export const REVIEW_PROFILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'kind',
    'repository_id',
    'workflow_profile',
    'step_id',
    'registration_id',
    'registration_epoch',
    'verification_key_id',
    'transport',
    'policy_sha256',
    'coverage',
    'budgets',
  ],
  properties: {
    version: { type: 'integer', const: REVIEW_PROFILE_VERSION },
    kind: { const: 'finite_review' },
    ...PROFILE_BINDING_PROPERTIES,
    transport: {
      type: 'object',
      additionalProperties: false,
      required: ['basis', 'executable_sha256', 'provider_scope', 'model'],
      properties: {
        // Any basis name decodes, so that a fixture or HTTP basis is refused with its own code.
        basis: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,31}$' },
        executable_sha256: HEX64_SCHEMA,
        provider_scope: ID_SCHEMA,
        model: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$' },
      },
    },
    policy_sha256: HEX64_SCHEMA,
    coverage: { type: 'array', minItems: 1, maxItems: REVIEW_LIMITS.maxCoveragePaths, items: PATH },
    budgets: REVIEW_BUDGETS_SCHEMA,
  },
} as const;

const profileDecoder = defineDecoder<ReviewCollectorProfile>(
  'agent-task.review-collector-profile',
  REVIEW_PROFILE_SCHEMA,
  {
    versionField: 'version',
    supportedVersions: [REVIEW_PROFILE_VERSION],
  },
);

export const REVIEW_PROFILE_DECODER = profileDecoder;

function checkProfile(profile: ReviewCollectorProfile): ReviewCollectorProfile {
  if (profile.transport.basis !== QUALIFIED_BASIS) {
    throw new AgentscmError(
      'REVIEW_TRANSPORT_NOT_QUALIFIED',
      `a finite-review profile pins the transport basis ${JSON.stringify(profile.transport.basis)}; only ` +
        `${QUALIFIED_BASIS} can qualify`,
      {
        hint:
          'pin the claude-code transport: the SHA-256 of the operator-selected executable, the provider scope ' +
          'and the model; fixture and HTTP bases are for tests only',
        details: { pointer: '/transport/basis', basis: profile.transport.basis },
      },
    );
  }
  // The coverage obeys the review action's rules (canonical paths, no repeats).
  checkReviewAction(
    {
      kind: 'review',
      policy: 'policy.json',
      coverage: profile.coverage,
      criteria: [{ criterion: 'coverage', description: 'coverage' }],
      budgets: profile.budgets,
    },
    '',
  );
  return profile;
}

/**
 * Strict decoding of a finite-review profile file; a fixture, HTTP or any other basis is
 * REVIEW_TRANSPORT_NOT_QUALIFIED.
 */
export function decodeReviewCollectorProfile(bytes: Uint8Array): ReviewCollectorProfile {
  return checkProfile(profileDecoder.decode(bytes, MAX_REVIEW_PROFILE_BYTES));
}

/** Canonical JSON of the profile in declared order. */
export function reviewCollectorProfileToJson(profile: ReviewCollectorProfile): JsonObject {
  return {
    version: profile.version,
    kind: profile.kind,
    repository_id: profile.repository_id,
    workflow_profile: profile.workflow_profile,
    step_id: profile.step_id,
    registration_id: profile.registration_id,
    registration_epoch: profile.registration_epoch,
    verification_key_id: profile.verification_key_id,
    transport: transportIdentityToJson(profile.transport),
    policy_sha256: profile.policy_sha256,
    coverage: [...profile.coverage],
    budgets: reviewBudgetsToJson(profile.budgets),
  };
}

/** `collector_profile_id` of a finite-review profile (domain agentscm.collector-profile.v1). */
export function reviewCollectorProfileId(profile: ReviewCollectorProfile): string {
  return digestCanonical(DOMAINS.collectorProfile, reviewCollectorProfileToJson(profile));
}

/**
 * Check that a review record was made under the profile's pins (import and admission): the same
 * transport identity, policy, coverage and budgets, and the profile's repository. Anything the
 * record names differently is REVIEW_PROFILE_MISMATCH (details.field names it).
 */
export function checkRecordAgainstProfile(profile: ReviewCollectorProfile, record: ReviewRecord): void {
  const differs = (field: string): never => {
    throw new AgentscmError(
      'REVIEW_PROFILE_MISMATCH',
      `the review record's ${field} is not the one the finite-review profile pins`,
      {
        hint:
          'a review record qualifies only under the transport, policy, coverage and budgets its profile pins; ' +
          'candidate data cannot select them',
        details: { field },
      },
    );
  };
  if (record.repository !== profile.repository_id) differs('repository');
  const pinned = profile.transport;
  if (record.transport.basis !== pinned.basis) differs('transport.basis');
  if (record.transport.executable_sha256 !== pinned.executable_sha256) differs('transport.executable_sha256');
  if (record.transport.provider_scope !== pinned.provider_scope) differs('transport.provider_scope');
  if (record.transport.model !== pinned.model) differs('transport.model');
  if (record.policy_sha256 !== profile.policy_sha256) differs('policy_sha256');
  if (
    record.action.coverage.length !== profile.coverage.length ||
    record.action.coverage.some((path, i) => path !== profile.coverage[i])
  )
    differs('coverage');
  const budgets = record.action.budgets;
  for (const key of Object.keys(profile.budgets) as (keyof ReviewBudgets)[])
    if (budgets[key] !== profile.budgets[key]) differs(`budgets.${key}`);
}

/** Either kind of installed collector profile; `isReviewProfile` tells them apart. */
export type AnyCollectorProfile = CollectorProfile | ReviewCollectorProfile;

export function isReviewProfile(profile: AnyCollectorProfile): profile is ReviewCollectorProfile {
  return profile.kind === 'finite_review';
}

/**
 * Strict decoding of a profile file of either kind: `kind` `finite_review` is a finite-review
 * profile (at most 256 KiB), anything else a command profile (decoded, and bounded, as one).
 */
export function decodeAnyCollectorProfile(bytes: Uint8Array): AnyCollectorProfile {
  const value = parseStrictJson(bytes, { maxBytes: MAX_REVIEW_PROFILE_BYTES });
  if (isJsonObject(value) && value.kind === 'finite_review') return checkProfile(profileDecoder.validate(value));
  return decodeCollectorProfile(bytes);
}

/** Canonical JSON of either kind. */
export function anyCollectorProfileToJson(profile: AnyCollectorProfile): JsonObject {
  return isReviewProfile(profile) ? reviewCollectorProfileToJson(profile) : collectorProfileToJson(profile);
}

/** `collector_profile_id` of either kind (domain agentscm.collector-profile.v1). */
export function anyCollectorProfileId(profile: AnyCollectorProfile): string {
  return digestCanonical(DOMAINS.collectorProfile, anyCollectorProfileToJson(profile));
}
