/**
 * ReviewRecord (docs/review.md "The record": import "compares the complete derived
 * review record, coverage, findings and outcome"): every call of one review with its request
 * digest, ticket and retained observation, then what the controller alone derived from them —
 * budget usage, per-path coverage, per-criterion outcome, findings, the outcome and its reasons.
 * Only `passed` passes; budgets exhausted, coverage incomplete, an invalid answer or an
 * uncertain call never pass and nothing is truncated silently. Pure.
 */
import { digestCanonical, DOMAINS } from '../digest.js';
import { DIGEST_SCHEMA, ID_SCHEMA, REPOSITORY_ID_SCHEMA } from '../ids.js';
import type { JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { MAX_RELATIVE_PATH_BYTES } from '../paths.js';
import {
  checkReviewAction,
  REVIEW_ACTION_SCHEMA,
  REVIEW_BUDGETS_SCHEMA,
  REVIEW_LIMITS,
  reviewActionToJson,
  reviewBudgetsToJson,
  type ReviewAction,
  type ReviewBudgets,
} from './policy.js';
import {
  MAX_FINDING_MESSAGE_BYTES,
  MAX_REVIEW_FINDINGS,
  SIZE_SCHEMA,
  TRANSPORT_IDENTITY_SCHEMA,
  transportIdentityToJson,
  type FindingSeverity,
  type ReviewTransportIdentity,
} from './request.js';

export const REVIEW_RECORD_VERSION = 1;
/**
 * The retained answers are bounded by the output budget, but their canonical encoding writes a
 * control character as six bytes; the findings drawn from accepted answers and the calls and
 * coverage rows add at most 2 MiB.
 */
export const MAX_REVIEW_RECORD_BYTES = 6 * REVIEW_LIMITS.maxOutputBytes + 2 * 1024 * 1024;
export const MAX_OBSERVATION_DETAIL_BYTES = 512;
/** Every finding of every accepted call: never cut. */
export const MAX_RECORD_FINDINGS = REVIEW_LIMITS.maxModelCalls * MAX_REVIEW_FINDINGS;

/** What a transport observed for one call. */
export const CALL_STATUSES = [
  'answered',
  'failed',
  'timed_out',
  'output_limit',
  'executable_changed',
  'uncertain',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** What the controller made of a call. */
export const CALL_EFFECTS = ['accepted', 'response_invalid', 'out_of_policy', 'not_answered'] as const;
export type CallEffect = (typeof CALL_EFFECTS)[number];

export const COVERAGE_STATES = [
  'covered',
  'partial',
  'not_covered',
  'missing',
  'not_regular_file',
  'not_utf8',
] as const;
export type CoverageState = (typeof COVERAGE_STATES)[number];

export const REVIEW_OUTCOMES = ['passed', 'failed', 'incomplete', 'uncertain'] as const;
export type ReviewOutcome = (typeof REVIEW_OUTCOMES)[number];

export const REVIEW_REASONS = [
  'coverage_incomplete',
  'budget_exhausted',
  'response_invalid',
  'out_of_policy',
  'transport_failed',
  'timed_out',
  'executable_changed',
  'call_uncertain',
  'criterion_failed',
] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

/** The retained observation of one call (the transport's answer, or the reopened reservation). */
export interface ReviewCallObservation {
  readonly status: CallStatus;
  /** The model's answer text (status answered), else null. */
  readonly response: string | null;
  readonly response_sha256: string | null;
  readonly response_bytes: number;
  readonly exit_code: number | null;
  readonly elapsed_ms: number;
  readonly executable_before: string | null;
  readonly executable_after: string | null;
  readonly detail: string | null;
}

export interface ReviewCallRecord {
  readonly call_index: number;
  readonly request_digest: string;
  readonly ticket: string;
  readonly exposed: readonly string[];
  readonly observation: ReviewCallObservation;
  readonly effect: CallEffect;
}

export interface ReviewCoverage {
  readonly path: string;
  readonly file_sha256: string | null;
  readonly file_bytes: number;
  readonly covered_bytes: number;
  readonly state: CoverageState;
}

export interface ReviewRecordFinding {
  readonly call_index: number;
  readonly criterion: string;
  readonly path: string;
  readonly line: number | null;
  readonly severity: FindingSeverity;
  readonly message: string;
}

export interface ReviewRecord {
  readonly version: 1;
  readonly kind: 'review_record';
  readonly review_id: string;
  readonly repository: string;
  readonly revision: string;
  readonly policy_sha256: string;
  readonly action: ReviewAction;
  readonly transport: ReviewTransportIdentity;
  readonly calls: readonly ReviewCallRecord[];
  readonly usage: ReviewBudgets;
  readonly coverage: readonly ReviewCoverage[];
  readonly criteria: readonly { readonly criterion: string; readonly outcome: 'passed' | 'failed' | 'not_assessed' }[];
  readonly findings: readonly ReviewRecordFinding[];
  readonly outcome: ReviewOutcome;
  readonly reasons: readonly ReviewReason[];
}

const PATH = { type: 'string', minLength: 1, maxLength: MAX_RELATIVE_PATH_BYTES } as const;
const SIZE = SIZE_SCHEMA;
const NULLABLE_DIGEST = { anyOf: [DIGEST_SCHEMA, { type: 'null' }] } as const;
/** Usage has the budgets' fields; its values are what was spent, which may reach the budget. */
const USAGE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: REVIEW_BUDGETS_SCHEMA.required,
  properties: { model_calls: SIZE, input_bytes: SIZE, output_bytes: SIZE, files_exposed: SIZE, wall_time_ms: SIZE },
} as const;

export const REVIEW_OBSERVATION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'status',
    'response',
    'response_sha256',
    'response_bytes',
    'exit_code',
    'elapsed_ms',
    'executable_before',
    'executable_after',
    'detail',
  ],
  properties: {
    status: { enum: [...CALL_STATUSES] },
    response: { anyOf: [{ type: 'string', maxUtf8Bytes: REVIEW_LIMITS.maxResponseBytes }, { type: 'null' }] },
    response_sha256: NULLABLE_DIGEST,
    response_bytes: { type: 'integer', minimum: 0, maximum: REVIEW_LIMITS.maxResponseBytes },
    exit_code: { anyOf: [{ type: 'integer', minimum: 0, maximum: 255 }, { type: 'null' }] },
    elapsed_ms: { type: 'integer', minimum: 0, maximum: REVIEW_LIMITS.maxWallTimeMs * 2 },
    executable_before: NULLABLE_DIGEST,
    executable_after: NULLABLE_DIGEST,
    detail: { anyOf: [{ type: 'string', maxUtf8Bytes: MAX_OBSERVATION_DETAIL_BYTES }, { type: 'null' }] },
  },
} as const;

/** The published JSON Schema (docs/schemas/review-record.schema.json). */
export const REVIEW_RECORD_SCHEMA = {
  $id: 'review-record',
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'kind',
    'review_id',
    'repository',
    'revision',
    'policy_sha256',
    'action',
    'transport',
    'calls',
    'usage',
    'coverage',
    'criteria',
    'findings',
    'outcome',
    'reasons',
  ],
  properties: {
    version: { type: 'integer', const: REVIEW_RECORD_VERSION },
    kind: { const: 'review_record' },
    review_id: DIGEST_SCHEMA,
    repository: REPOSITORY_ID_SCHEMA,
    revision: DIGEST_SCHEMA,
    policy_sha256: DIGEST_SCHEMA,
    action: REVIEW_ACTION_SCHEMA,
    transport: TRANSPORT_IDENTITY_SCHEMA,
    calls: {
      type: 'array',
      maxItems: REVIEW_LIMITS.maxModelCalls,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['call_index', 'request_digest', 'ticket', 'exposed', 'observation', 'effect'],
        properties: {
          call_index: { type: 'integer', minimum: 0, maximum: REVIEW_LIMITS.maxModelCalls - 1 },
          request_digest: DIGEST_SCHEMA,
          ticket: DIGEST_SCHEMA,
          exposed: { type: 'array', maxItems: REVIEW_LIMITS.maxCoveragePaths, items: PATH },
          observation: REVIEW_OBSERVATION_SCHEMA,
          effect: { enum: [...CALL_EFFECTS] },
        },
      },
    },
    usage: USAGE_SCHEMA,
    coverage: {
      type: 'array',
      minItems: 1,
      maxItems: REVIEW_LIMITS.maxCoveragePaths,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'file_sha256', 'file_bytes', 'covered_bytes', 'state'],
        properties: {
          path: PATH,
          file_sha256: NULLABLE_DIGEST,
          file_bytes: SIZE,
          covered_bytes: SIZE,
          state: { enum: [...COVERAGE_STATES] },
        },
      },
    },
    criteria: {
      type: 'array',
      minItems: 1,
      maxItems: REVIEW_LIMITS.maxCriteria,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['criterion', 'outcome'],
        properties: { criterion: ID_SCHEMA, outcome: { enum: ['passed', 'failed', 'not_assessed'] } },
      },
    },
    findings: {
      type: 'array',
      maxItems: MAX_RECORD_FINDINGS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['call_index', 'criterion', 'path', 'line', 'severity', 'message'],
        properties: {
          call_index: { type: 'integer', minimum: 0, maximum: REVIEW_LIMITS.maxModelCalls - 1 },
          criterion: ID_SCHEMA,
          path: PATH,
          line: { anyOf: [{ type: 'integer', minimum: 1, maximum: 2 ** 32 }, { type: 'null' }] },
          severity: { enum: ['blocking', 'advisory'] },
          message: { type: 'string', minLength: 1, maxUtf8Bytes: MAX_FINDING_MESSAGE_BYTES },
        },
      },
    },
    outcome: { enum: [...REVIEW_OUTCOMES] },
    reasons: { type: 'array', maxItems: REVIEW_REASONS.length, items: { enum: [...REVIEW_REASONS] } },
  },
} as const;

const RECORD_DECODER = defineDecoder<ReviewRecord>('review-record', REVIEW_RECORD_SCHEMA, {
  versionField: 'version',
  supportedVersions: [REVIEW_RECORD_VERSION],
});
const OBSERVATION_DECODER = defineDecoder<ReviewCallObservation>('review-call-observation', REVIEW_OBSERVATION_SCHEMA);

export const REVIEW_RECORD_DECODER = RECORD_DECODER;
export const REVIEW_OBSERVATION_DECODER = OBSERVATION_DECODER;
/** An observation is bounded by one response and a few hundred bytes around it. */
export const MAX_REVIEW_OBSERVATION_BYTES = 6 * REVIEW_LIMITS.maxResponseBytes + 8 * 1024;

/** Strictly decode a record (refused above MAX_REVIEW_RECORD_BYTES before parsing). */
export function decodeReviewRecord(bytes: Uint8Array): ReviewRecord {
  const record = RECORD_DECODER.decode(bytes, MAX_REVIEW_RECORD_BYTES);
  checkReviewAction(record.action, '/action');
  return record;
}

/** Strictly decode one retained observation (the journal's bytes). */
export function decodeReviewObservation(bytes: Uint8Array): ReviewCallObservation {
  return OBSERVATION_DECODER.decode(bytes, MAX_REVIEW_OBSERVATION_BYTES);
}

export function observationToJson(o: ReviewCallObservation): JsonObject {
  return {
    status: o.status,
    response: o.response,
    response_sha256: o.response_sha256,
    response_bytes: o.response_bytes,
    exit_code: o.exit_code,
    elapsed_ms: o.elapsed_ms,
    executable_before: o.executable_before,
    executable_after: o.executable_after,
    detail: o.detail,
  };
}

/** The record in declared field order (docs/review.md "The record"). */
export function reviewRecordToJson(record: ReviewRecord): JsonObject {
  return {
    version: record.version,
    kind: record.kind,
    review_id: record.review_id,
    repository: record.repository,
    revision: record.revision,
    policy_sha256: record.policy_sha256,
    action: reviewActionToJson(record.action),
    transport: transportIdentityToJson(record.transport),
    calls: record.calls.map((c) => ({
      call_index: c.call_index,
      request_digest: c.request_digest,
      ticket: c.ticket,
      exposed: [...c.exposed],
      observation: observationToJson(c.observation),
      effect: c.effect,
    })),
    usage: reviewBudgetsToJson(record.usage),
    coverage: record.coverage.map((c) => ({
      path: c.path,
      file_sha256: c.file_sha256,
      file_bytes: c.file_bytes,
      covered_bytes: c.covered_bytes,
      state: c.state,
    })),
    criteria: record.criteria.map((c) => ({ criterion: c.criterion, outcome: c.outcome })),
    findings: record.findings.map((f) => ({
      call_index: f.call_index,
      criterion: f.criterion,
      path: f.path,
      line: f.line,
      severity: f.severity,
      message: f.message,
    })),
    outcome: record.outcome,
    reasons: [...record.reasons],
  };
}

/** Record digest (domain agentscm.review-record.v1). */
export function reviewRecordDigest(record: ReviewRecord): string {
  return digestCanonical(DOMAINS.reviewRecord, reviewRecordToJson(record));
}

/** Only a passed record passes (docs/review.md): every other outcome blocks. */
export function reviewRecordPasses(record: Pick<ReviewRecord, 'outcome'>): boolean {
  return record.outcome === 'passed';
}
