/**
 * ReviewRequest and the model response envelope (docs/review.md "Collecting a review": a
 * transfer carries "ReviewRequest plus ReviewRecord"; the finite controller exposes bounded
 * source excerpts "one canonical request at a time"). A request is the complete canonical text
 * one model call sees: the review, its call index, the exact revision, the policy digest, the
 * model, the instructions, the criteria and the excerpts, each excerpt naming the file's SHA-256
 * and the byte range it shows. The response envelope is what the model must answer: one verdict
 * per criterion and bounded findings, each naming a path of the request's own excerpts. Model
 * output is data: nothing in it selects a path, extends a budget or runs anything. Pure.
 */
import { sha256Hex } from '../../crypto/sha256.js';
import { digestCanonical, DOMAINS } from '../digest.js';
import { AgentscmError } from '../errors.js';
import { DIGEST_SCHEMA, ID_SCHEMA, REPOSITORY_ID_SCHEMA } from '../ids.js';
import { encodeCanonical } from '../json/canonical-json.js';
import type { JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { MAX_RELATIVE_PATH_BYTES } from '../paths.js';
import { REVIEW_CRITERIA_SCHEMA, REVIEW_LIMITS, type ReviewCriterion } from './policy.js';

export const REVIEW_REQUEST_VERSION = 1;
export const REVIEW_RESPONSE_VERSION = 1;
/** What a response must be: the name the request gives the model (docs/review.md). */
export const REVIEW_RESPONSE_FORMAT = 'agentscm.review-response.v1';

/**
 * A request holds at most one call's excerpts plus the instructions and criteria; the canonical
 * encoding writes a control character as six bytes, so text is counted six times, and 256 KiB
 * more covers 256 excerpts' paths and members.
 */
export const MAX_REVIEW_REQUEST_BYTES =
  6 *
    (REVIEW_LIMITS.maxCallExcerptBytes +
      REVIEW_LIMITS.maxInstructionsBytes +
      REVIEW_LIMITS.maxCriteria * REVIEW_LIMITS.maxCriterionDescriptionBytes) +
  256 * 1024;
export const MAX_REVIEW_FINDINGS = 16;
export const MAX_FINDING_MESSAGE_BYTES = 2048;
export const MAX_REQUEST_EXCERPTS = 256;

/** Transport bases: only `claude-code` can qualify; `fixture` is for tests (docs/review.md). */
export const TRANSPORT_BASES = ['claude-code', 'fixture'] as const;
export type TransportBasis = (typeof TRANSPORT_BASES)[number];

/** Who answers: the operator-pinned transport, as every request and the record name it. */
export interface ReviewTransportIdentity {
  readonly basis: TransportBasis;
  /** SHA-256 of the executable's bytes (claude-code), or null (fixture). */
  readonly executable_sha256: string | null;
  /** The provider scope the operator names (e.g. an account or organisation label). */
  readonly provider_scope: string;
  readonly model: string;
}

export interface ReviewExcerpt {
  readonly path: string;
  /** SHA-256 of the whole file in the revision. */
  readonly file_sha256: string;
  readonly file_bytes: number;
  readonly offset: number;
  readonly length: number;
  /** The exact bytes [offset, offset + length) of the file, UTF-8. */
  readonly text: string;
}

export interface ReviewRequest {
  readonly version: 1;
  readonly kind: 'review_request';
  readonly review_id: string;
  readonly call_index: number;
  readonly repository: string;
  readonly revision: string;
  readonly policy_sha256: string;
  readonly transport: ReviewTransportIdentity;
  readonly instructions: string;
  readonly criteria: readonly ReviewCriterion[];
  readonly excerpts: readonly ReviewExcerpt[];
  readonly response_format: typeof REVIEW_RESPONSE_FORMAT;
}

export type ReviewVerdict = 'pass' | 'fail';
export type FindingSeverity = 'blocking' | 'advisory';

export interface ReviewFinding {
  readonly criterion: string;
  readonly path: string;
  /** 1-based line, or null for the whole excerpt. */
  readonly line: number | null;
  readonly severity: FindingSeverity;
  readonly message: string;
}

/** What the model answers for one request. */
export interface ReviewResponse {
  readonly version: 1;
  readonly verdicts: readonly { readonly criterion: string; readonly verdict: ReviewVerdict }[];
  readonly findings: readonly ReviewFinding[];
}

const PATH = { type: 'string', minLength: 1, maxLength: MAX_RELATIVE_PATH_BYTES } as const;
const MODEL = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$' } as const;

export const TRANSPORT_IDENTITY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['basis', 'executable_sha256', 'provider_scope', 'model'],
  properties: {
    basis: { enum: [...TRANSPORT_BASES] },
    executable_sha256: { anyOf: [DIGEST_SCHEMA, { type: 'null' }] },
    provider_scope: ID_SCHEMA,
    model: MODEL,
  },
} as const;

/** Byte sizes and offsets: below 2^48, so a value past the bound is still an exact number. */
export const SIZE_SCHEMA = { type: 'integer', minimum: 0, maximum: 2 ** 48 } as const;
const SIZE = SIZE_SCHEMA;

/** The published JSON Schema (docs/schemas/review-request.schema.json). */
export const REVIEW_REQUEST_SCHEMA = {
  $id: 'review-request',
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'kind',
    'review_id',
    'call_index',
    'repository',
    'revision',
    'policy_sha256',
    'transport',
    'instructions',
    'criteria',
    'excerpts',
    'response_format',
  ],
  properties: {
    version: { type: 'integer', const: REVIEW_REQUEST_VERSION },
    kind: { const: 'review_request' },
    review_id: DIGEST_SCHEMA,
    call_index: { type: 'integer', minimum: 0, maximum: REVIEW_LIMITS.maxModelCalls - 1 },
    repository: REPOSITORY_ID_SCHEMA,
    revision: DIGEST_SCHEMA,
    policy_sha256: DIGEST_SCHEMA,
    transport: TRANSPORT_IDENTITY_SCHEMA,
    instructions: { type: 'string', maxUtf8Bytes: REVIEW_LIMITS.maxInstructionsBytes },
    criteria: REVIEW_CRITERIA_SCHEMA,
    excerpts: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_REQUEST_EXCERPTS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'file_sha256', 'file_bytes', 'offset', 'length', 'text'],
        properties: {
          path: PATH,
          file_sha256: DIGEST_SCHEMA,
          file_bytes: SIZE,
          offset: SIZE,
          length: { type: 'integer', minimum: 0, maximum: REVIEW_LIMITS.maxExcerptBytes },
          text: { type: 'string', maxUtf8Bytes: REVIEW_LIMITS.maxExcerptBytes },
        },
      },
    },
    response_format: { const: REVIEW_RESPONSE_FORMAT },
  },
} as const;

/** The published JSON Schema (docs/schemas/review-response.schema.json): what the model must answer. */
export const REVIEW_RESPONSE_SCHEMA = {
  $id: 'review-response',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'verdicts', 'findings'],
  properties: {
    version: { type: 'integer', const: REVIEW_RESPONSE_VERSION },
    verdicts: {
      type: 'array',
      minItems: 1,
      maxItems: REVIEW_LIMITS.maxCriteria,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['criterion', 'verdict'],
        properties: { criterion: ID_SCHEMA, verdict: { enum: ['pass', 'fail'] } },
      },
    },
    findings: {
      type: 'array',
      maxItems: MAX_REVIEW_FINDINGS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['criterion', 'path', 'line', 'severity', 'message'],
        properties: {
          criterion: ID_SCHEMA,
          path: PATH,
          line: { anyOf: [{ type: 'integer', minimum: 1, maximum: 2 ** 32 }, { type: 'null' }] },
          severity: { enum: ['blocking', 'advisory'] },
          message: { type: 'string', minLength: 1, maxUtf8Bytes: MAX_FINDING_MESSAGE_BYTES, pattern: '^[^\\u0000]*$' },
        },
      },
    },
  },
} as const;

const REQUEST_DECODER = defineDecoder<ReviewRequest>('review-request', REVIEW_REQUEST_SCHEMA, {
  versionField: 'version',
  supportedVersions: [REVIEW_REQUEST_VERSION],
});
const RESPONSE_DECODER = defineDecoder<ReviewResponse>('review-response', REVIEW_RESPONSE_SCHEMA, {
  versionField: 'version',
  supportedVersions: [REVIEW_RESPONSE_VERSION],
});
const IDENTITY_DECODER = defineDecoder<ReviewTransportIdentity>('review-transport-identity', TRANSPORT_IDENTITY_SCHEMA);

export const REVIEW_REQUEST_DECODER = REQUEST_DECODER;
export const REVIEW_RESPONSE_DECODER = RESPONSE_DECODER;

/** Strictly decode a request (refused above MAX_REVIEW_REQUEST_BYTES before parsing). */
export function decodeReviewRequest(bytes: Uint8Array): ReviewRequest {
  return REQUEST_DECODER.decode(bytes, MAX_REVIEW_REQUEST_BYTES);
}

/**
 * Strictly decode a model response of at most `maxBytes` (the remaining output budget) — the
 * size is checked before parsing, so an oversize answer is never allocated as a value.
 */
export function decodeReviewResponse(bytes: Uint8Array, maxBytes: number): ReviewResponse {
  return RESPONSE_DECODER.decode(bytes, Math.min(maxBytes, REVIEW_LIMITS.maxResponseBytes));
}

export function transportIdentityToJson(identity: ReviewTransportIdentity): JsonObject {
  return {
    basis: identity.basis,
    executable_sha256: identity.executable_sha256,
    provider_scope: identity.provider_scope,
    model: identity.model,
  };
}

/**
 * The transport identity as a transfer header's `collector.runtime_identity_digest` names it for
 * a review: the plain SHA-256 of its canonical JSON (as a command transfer names its runtime
 * identity).
 */
export function reviewTransportDigest(identity: ReviewTransportIdentity): string {
  return sha256Hex(encodeCanonical(transportIdentityToJson(identity)));
}

/** Refuse an identity the schema would refuse (the transports build identities from operator input). */
export function validateTransportIdentity(identity: ReviewTransportIdentity): ReviewTransportIdentity {
  try {
    return IDENTITY_DECODER.validate(transportIdentityToJson(identity));
  } catch (error) {
    if (!(error instanceof AgentscmError)) throw error;
    throw new AgentscmError('REVIEW_TRANSPORT_INVALID', `the review transport identity is invalid: ${error.message}`, {
      hint: 'name a model of letters, digits and ._:@/- and a provider scope id',
      cause: error,
    });
  }
}

/** The request in declared field order; its canonical bytes are exactly what the model is sent. */
export function reviewRequestToJson(request: ReviewRequest): JsonObject {
  return {
    version: request.version,
    kind: request.kind,
    review_id: request.review_id,
    call_index: request.call_index,
    repository: request.repository,
    revision: request.revision,
    policy_sha256: request.policy_sha256,
    transport: transportIdentityToJson(request.transport),
    instructions: request.instructions,
    criteria: request.criteria.map((row) => ({ criterion: row.criterion, description: row.description })),
    excerpts: request.excerpts.map((e) => ({
      path: e.path,
      file_sha256: e.file_sha256,
      file_bytes: e.file_bytes,
      offset: e.offset,
      length: e.length,
      text: e.text,
    })),
    response_format: request.response_format,
  };
}

/** Request digest (domain agentscm.review-request.v1 over its canonical bytes). */
export function reviewRequestDigest(request: ReviewRequest): string {
  return digestCanonical(DOMAINS.reviewRequest, reviewRequestToJson(request));
}

/**
 * The ticket of one reserved call: binds the review, the call index and the request digest, so
 * a retained observation can be attached to exactly one reservation.
 */
export function reviewTicket(reviewId: string, callIndex: number, requestDigest: string): string {
  return digestCanonical(DOMAINS.reviewTicket, {
    review_id: reviewId,
    call_index: callIndex,
    request_digest: requestDigest,
  });
}

export function reviewResponseToJson(response: ReviewResponse): JsonObject {
  return {
    version: response.version,
    verdicts: response.verdicts.map((v) => ({ criterion: v.criterion, verdict: v.verdict })),
    findings: response.findings.map((f) => ({
      criterion: f.criterion,
      path: f.path,
      line: f.line,
      severity: f.severity,
      message: f.message,
    })),
  };
}
