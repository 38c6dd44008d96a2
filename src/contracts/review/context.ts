/**
 * ReviewContext command/v1 (docs/command-collector.md "Review contexts": the compiler "requires a real,
 * existing, current Change and command/v1 ReviewContext that bind the same revision, policy
 * epoch, recipe, toolchain and environment"). The context digest is the domain digest
 * (DOMAINS.reviewContext) of the canonical encoding in the declared field order below.
 */
import { digestCanonical, DOMAINS } from '../digest.js';
import { encodeCanonical } from '../json/canonical-json.js';
import type { JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';

export const REVIEW_CONTEXT_VERSION = 1;
export const REVIEW_CONTEXT_KIND = 'command/v1';
export const MAX_REVIEW_CONTEXT_BYTES = 16 * 1024;

/** Declared order = encoding order. */
export interface ReviewContext {
  readonly version: 1;
  readonly kind: 'command/v1';
  readonly repository: string;
  readonly change: { readonly repository: string; readonly id: string };
  readonly change_version: bigint;
  readonly revision: string;
  readonly policy_epoch: bigint;
  /** Full native source path of the recipe in the revision. */
  readonly recipe_path: string;
  /** SHA-256 of the exact recipe bytes. */
  readonly recipe_digest: string;
  readonly toolchain: string;
  readonly environment: string;
}

const REPOSITORY = {
  type: 'string',
  minLength: 32,
  maxLength: 32,
  pattern: '^[0-9a-f]{32}$',
  idKind: 'repository',
} as const;
const DIGEST = { type: 'string', minLength: 64, maxLength: 64, pattern: '^[0-9a-f]{64}$', idKind: 'digest' } as const;
const ID = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._-]{1,128}$', idKind: 'id' } as const;
const IDENTITY = {
  type: 'string',
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:@+/=-]*$',
  minLength: 1,
  maxLength: 256,
} as const;

/** The published JSON Schema (docs/schemas/review-context.schema.json). */
export const REVIEW_CONTEXT_SCHEMA = {
  $id: 'review-context',
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'kind',
    'repository',
    'change',
    'change_version',
    'revision',
    'policy_epoch',
    'recipe_path',
    'recipe_digest',
    'toolchain',
    'environment',
  ],
  properties: {
    version: { type: 'integer', const: REVIEW_CONTEXT_VERSION },
    kind: { const: REVIEW_CONTEXT_KIND },
    repository: REPOSITORY,
    change: {
      type: 'object',
      additionalProperties: false,
      required: ['repository', 'id'],
      properties: { repository: REPOSITORY, id: ID },
    },
    change_version: { u64: { minimum: '1' } },
    revision: DIGEST,
    policy_epoch: { u64: true },
    recipe_path: { type: 'string', minLength: 1, maxUtf8Bytes: 512 },
    recipe_digest: DIGEST,
    toolchain: IDENTITY,
    environment: IDENTITY,
  },
} as const;

const DECODER = defineDecoder<ReviewContext>('review-context', REVIEW_CONTEXT_SCHEMA, {
  versionField: 'version',
  supportedVersions: [REVIEW_CONTEXT_VERSION],
});

/** The decoder, for the schema registry and docs/schemas/. */
export const REVIEW_CONTEXT_DECODER = DECODER;

/** Build a context with its fields in the declared order. */
export function buildReviewContext(input: Omit<ReviewContext, 'version' | 'kind'>): ReviewContext {
  return reviewContextJson(input) as unknown as ReviewContext;
}

/** The context as a JSON object in the declared field order (what is encoded and digested). */
export function reviewContextJson(input: Omit<ReviewContext, 'version' | 'kind'>): JsonObject {
  return {
    version: REVIEW_CONTEXT_VERSION,
    kind: REVIEW_CONTEXT_KIND,
    repository: input.repository,
    change: { repository: input.change.repository, id: input.change.id },
    change_version: input.change_version,
    revision: input.revision,
    policy_epoch: input.policy_epoch,
    recipe_path: input.recipe_path,
    recipe_digest: input.recipe_digest,
    toolchain: input.toolchain,
    environment: input.environment,
  };
}

/** Strictly decode stored or received context bytes. */
export function decodeReviewContext(bytes: Uint8Array): ReviewContext {
  return DECODER.decode(bytes, MAX_REVIEW_CONTEXT_BYTES);
}

/** Canonical bytes of a context. */
export function encodeReviewContext(context: ReviewContext): Uint8Array {
  return encodeCanonical(reviewContextJson(context));
}

/** The context digest: domain digest (agentscm.review-context.v1) of the canonical encoding. */
export function reviewContextDigest(context: ReviewContext): string {
  return digestCanonical(DOMAINS.reviewContext, reviewContextJson(context));
}
