/**
 * The finite-review collector descriptor (docs/review.md "Collecting a review": the
 * "server-derived claimed descriptor matching that installed profile"; docs/review.md "Collecting
 * a review"): the answer of `collector_claim` / `collector_descriptor` for a review task claimed
 * under a finite-review profile, and the input of `agent-task collect`. It has every binding of
 * the command descriptor (authority, profile, task, attempt, subject, origin, executor, upload
 * request); in place of the recipe and runtime identity it carries the review the plan installs
 * (`review {policy_path, policy_sha256, action}`) and the transport the profile pins
 * (`transport {basis, executable_sha256, provider_scope, model}`). Candidate data selects none of
 * them: both are copied from the installed requirement and profile. Pure.
 */
import {
  COLLECTOR_DESCRIPTOR_SCHEMA,
  collectorDescriptorToJson,
  decodeCollectorDescriptor,
  descriptorBindingsToJson,
  type CollectorDescriptor,
} from '../collector/descriptor.js';
import { encodeCanonical } from '../json/canonical-json.js';
import { isJsonObject, type JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { parseStrictJson } from '../json/strict-json.js';
import { MAX_RELATIVE_PATH_BYTES } from '../paths.js';
import { HEX64_SCHEMA } from '../task/common.js';
import { checkReviewAction, REVIEW_ACTION_SCHEMA, reviewActionToJson, type ReviewAction } from './policy.js';
import { REVIEW_PROFILE_SCHEMA } from './profile.js';
import { transportIdentityToJson, type ReviewTransportIdentity } from './request.js';

/** A review descriptor holds one review action (coverage, criteria, budgets: well under 512 KiB). */
export const MAX_REVIEW_DESCRIPTOR_BYTES = 512 * 1024;

/** The review the requirement's plan installs for the step. */
export interface DescriptorReview {
  /** The policy resource's path in the revision (the plan binds it). */
  readonly policy_path: string;
  /** SHA-256 of the policy's exact bytes (= the profile's policy_sha256). */
  readonly policy_sha256: string;
  /** The step's review action as the definition declares it. */
  readonly action: ReviewAction;
}

/** docs/review.md "Collecting a review", fields in declared (encoding) order. */
export interface ReviewCollectorDescriptor extends Omit<CollectorDescriptor, 'recipe' | 'runtime_identity_digest'> {
  readonly review: DescriptorReview;
  readonly transport: ReviewTransportIdentity & { readonly basis: 'claude-code'; readonly executable_sha256: string };
}

/** Either kind of descriptor; `isReviewDescriptor` tells them apart. */
export type AnyCollectorDescriptor = CollectorDescriptor | ReviewCollectorDescriptor;

export function isReviewDescriptor(descriptor: AnyCollectorDescriptor): descriptor is ReviewCollectorDescriptor {
  return 'review' in descriptor;
}

const {
  recipe: _recipe,
  runtime_identity_digest: _runtime,
  upload_request_id: uploadRequestIdSchema,
  ...COMMON_PROPERTIES
} = COLLECTOR_DESCRIPTOR_SCHEMA.properties;
const COMMON_REQUIRED = COLLECTOR_DESCRIPTOR_SCHEMA.required.filter(
  (field) => field !== 'recipe' && field !== 'runtime_identity_digest' && field !== 'upload_request_id',
);

export const REVIEW_COLLECTOR_DESCRIPTOR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [...COMMON_REQUIRED, 'review', 'transport', 'upload_request_id'],
  properties: {
    ...COMMON_PROPERTIES,
    review: {
      type: 'object',
      additionalProperties: false,
      required: ['policy_path', 'policy_sha256', 'action'],
      properties: {
        policy_path: { type: 'string', minLength: 1, maxLength: MAX_RELATIVE_PATH_BYTES },
        policy_sha256: HEX64_SCHEMA,
        action: REVIEW_ACTION_SCHEMA,
      },
    },
    transport: {
      ...REVIEW_PROFILE_SCHEMA.properties.transport,
      properties: { ...REVIEW_PROFILE_SCHEMA.properties.transport.properties, basis: { const: 'claude-code' } },
    },
    upload_request_id: uploadRequestIdSchema,
  },
} as const;

const reviewDescriptorDecoder = defineDecoder<ReviewCollectorDescriptor>(
  'agent-task.review-collector-descriptor',
  REVIEW_COLLECTOR_DESCRIPTOR_SCHEMA,
  {
    versionField: 'version',
    supportedVersions: [1],
  },
);

function checkReviewDescriptor(descriptor: ReviewCollectorDescriptor): ReviewCollectorDescriptor {
  checkReviewAction(descriptor.review.action, '/review/action');
  return descriptor;
}

/** Canonical (declared-order) JSON of a review descriptor. */
export function reviewDescriptorToJson(descriptor: ReviewCollectorDescriptor): JsonObject {
  return {
    ...descriptorBindingsToJson(descriptor),
    review: {
      policy_path: descriptor.review.policy_path,
      policy_sha256: descriptor.review.policy_sha256,
      action: reviewActionToJson(descriptor.review.action),
    },
    transport: transportIdentityToJson(descriptor.transport),
    upload_request_id: descriptor.upload_request_id,
  };
}

/** Canonical JSON of either kind. */
export function anyDescriptorToJson(descriptor: AnyCollectorDescriptor): JsonObject {
  return isReviewDescriptor(descriptor) ? reviewDescriptorToJson(descriptor) : collectorDescriptorToJson(descriptor);
}

/** The canonical bytes of either kind (what `agent-task claim --out` writes). */
export function encodeAnyCollectorDescriptor(descriptor: AnyCollectorDescriptor): Buffer {
  return encodeCanonical(anyDescriptorToJson(descriptor));
}

/** Strict decoding of a review descriptor only (the bound, the schema, then the action's checks). */
export function decodeReviewCollectorDescriptor(bytes: Uint8Array): ReviewCollectorDescriptor {
  return checkReviewDescriptor(
    reviewDescriptorDecoder.validate(parseStrictJson(bytes, { maxBytes: MAX_REVIEW_DESCRIPTOR_BYTES })),
  );
}

/**
 * Strict decoding of either kind: an object with a `review` member is a review descriptor, any
 * other a command descriptor (each then decoded strictly by its own schema).
 */
export function decodeAnyCollectorDescriptor(bytes: Uint8Array): AnyCollectorDescriptor {
  const value = parseStrictJson(bytes, { maxBytes: MAX_REVIEW_DESCRIPTOR_BYTES });
  if (isJsonObject(value) && 'review' in value) return checkReviewDescriptor(reviewDescriptorDecoder.validate(value));
  // A command descriptor keeps its own (smaller) bound and its own checks.
  return decodeCollectorDescriptor(bytes);
}
