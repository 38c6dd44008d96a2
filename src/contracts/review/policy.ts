/**
 * The `review` action of the skill workflow definition and the review policy resource it names
 * (docs/review.md "The policy": every required step must pass, "including review"; docs/review.md
 * "The finite-review collector profile": a finite-review profile pins the installed policy
 * digest, required path coverage and finite budgets). The action says which revision paths must
 * be covered, the criteria and the finite budgets; the policy (a packaged skill resource,
 * identified by the SHA-256 of its exact bytes) says which paths may ever be exposed, how large
 * one excerpt and one call may be, and the reviewer's instructions. Pure: shape and bounds only.
 */
import { sha256Hex } from '../../crypto/sha256.js';
import { AgentscmError } from '../errors.js';
import { ID_SCHEMA } from '../ids.js';
import type { JsonObject } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { isRelativePathWithin, MAX_RELATIVE_PATH_BYTES, relativePathProblem } from '../paths.js';

/** Every bound of review (docs/review.md "The policy"), checked before anything is allocated or called. */
export const REVIEW_LIMITS = {
  maxCoveragePaths: 256,
  maxCriteria: 16,
  maxCriterionDescriptionBytes: 1024,
  maxModelCalls: 32,
  /** With the record (at most 8 MiB) the requests stay inside one 16 MiB collector transfer. */
  maxInputBytes: 6 * 1024 * 1024,
  maxOutputBytes: 1024 * 1024,
  /** One model answer. */
  maxResponseBytes: 256 * 1024,
  maxFilesExposed: 1024,
  maxWallTimeMs: 3_600_000,
  maxPolicyBytes: 64 * 1024,
  maxInstructionsBytes: 16 * 1024,
  maxExposurePrefixes: 64,
  maxExcerptBytes: 256 * 1024,
  maxCallExcerptBytes: 512 * 1024,
  maxCallTimeoutMs: 600_000,
} as const;

export const REVIEW_POLICY_VERSION = 1;

/** One criterion the reviewer judges every excerpt against. */
export interface ReviewCriterion {
  readonly criterion: string;
  readonly description: string;
}

/** Finite budgets of one review; each is a hard stop, never a truncation. */
export interface ReviewBudgets {
  readonly model_calls: number;
  /** Sum of the canonical request bytes sent. */
  readonly input_bytes: number;
  /** Sum of the response bytes received. */
  readonly output_bytes: number;
  /** Distinct revision paths exposed. */
  readonly files_exposed: number;
  /** Sum of the observed durations of the calls. */
  readonly wall_time_ms: number;
}

/** The `review` action of a workflow step (docs/review.md "The review action"). */
export interface ReviewAction {
  readonly kind: 'review';
  /** The policy resource, relative to the skill directory (like a command step's runner). */
  readonly policy: string;
  /** Revision file paths every one of whose bytes must be exposed and answered. */
  readonly coverage: readonly string[];
  readonly criteria: readonly ReviewCriterion[];
  readonly budgets: ReviewBudgets;
}

/** The installed review policy resource (docs/review.md "The policy"). */
export interface ReviewPolicy {
  readonly version: 1;
  /** Reviewer instructions sent with every request (data for the model, never run). */
  readonly instructions: string;
  /** Path prefixes (whole components; "" is not allowed) the controller may ever expose. */
  readonly exposure: readonly string[];
  /** Largest excerpt of one file in one request (at most max_call_excerpt_bytes is used). */
  readonly max_excerpt_bytes: number;
  /** Largest sum of excerpt bytes in one request. */
  readonly max_call_excerpt_bytes: number;
  /** Longest one call may take (also bounded by the remaining wall-time budget). */
  readonly call_timeout_ms: number;
}

const PATH = { type: 'string', minLength: 1, maxLength: MAX_RELATIVE_PATH_BYTES } as const;

function integer(minimum: number, maximum: number): { type: 'integer'; minimum: number; maximum: number } {
  return { type: 'integer', minimum, maximum };
}

export const REVIEW_CRITERIA_SCHEMA = {
  type: 'array',
  minItems: 1,
  maxItems: REVIEW_LIMITS.maxCriteria,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['criterion', 'description'],
    properties: {
      criterion: ID_SCHEMA,
      description: { type: 'string', minLength: 1, maxUtf8Bytes: REVIEW_LIMITS.maxCriterionDescriptionBytes },
    },
  },
} as const;

export const REVIEW_BUDGETS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['model_calls', 'input_bytes', 'output_bytes', 'files_exposed', 'wall_time_ms'],
  properties: {
    model_calls: integer(1, REVIEW_LIMITS.maxModelCalls),
    input_bytes: integer(1, REVIEW_LIMITS.maxInputBytes),
    output_bytes: integer(1, REVIEW_LIMITS.maxOutputBytes),
    files_exposed: integer(1, REVIEW_LIMITS.maxFilesExposed),
    wall_time_ms: integer(1, REVIEW_LIMITS.maxWallTimeMs),
  },
} as const;

/** The action's JSON Schema, one branch of the definition's step action. */
export const REVIEW_ACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'policy', 'coverage', 'criteria', 'budgets'],
  properties: {
    kind: { const: 'review' },
    policy: PATH,
    coverage: { type: 'array', minItems: 1, maxItems: REVIEW_LIMITS.maxCoveragePaths, items: PATH },
    criteria: REVIEW_CRITERIA_SCHEMA,
    budgets: REVIEW_BUDGETS_SCHEMA,
  },
} as const;

/** The published JSON Schema (docs/schemas/review-policy.schema.json). */
export const REVIEW_POLICY_SCHEMA = {
  $id: 'review-policy',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'instructions', 'exposure', 'max_excerpt_bytes', 'max_call_excerpt_bytes', 'call_timeout_ms'],
  properties: {
    version: { type: 'integer', const: REVIEW_POLICY_VERSION },
    instructions: { type: 'string', maxUtf8Bytes: REVIEW_LIMITS.maxInstructionsBytes },
    exposure: { type: 'array', minItems: 1, maxItems: REVIEW_LIMITS.maxExposurePrefixes, items: PATH },
    max_excerpt_bytes: integer(1, REVIEW_LIMITS.maxExcerptBytes),
    max_call_excerpt_bytes: integer(1, REVIEW_LIMITS.maxCallExcerptBytes),
    call_timeout_ms: integer(1, REVIEW_LIMITS.maxCallTimeoutMs),
  },
} as const;

const POLICY_DECODER = defineDecoder<ReviewPolicy>('review-policy', REVIEW_POLICY_SCHEMA, {
  versionField: 'version',
  supportedVersions: [REVIEW_POLICY_VERSION],
});

const ACTION_DECODER = defineDecoder<ReviewAction>('skill-workflow-action-review', REVIEW_ACTION_SCHEMA);

/** The decoders, for the fuzz campaign. */
export const REVIEW_POLICY_DECODER = POLICY_DECODER;
export const REVIEW_ACTION_DECODER = ACTION_DECODER;

function checkPath(path: string, pointer: string, what: string): void {
  const problem = relativePathProblem(path);
  if (problem === undefined) return;
  throw new AgentscmError(
    'PATH_INVALID',
    `${what} ${JSON.stringify(path.slice(0, 80))} is not a canonical relative path: ${problem}`,
    {
      hint: 'use ASCII components joined by /, without ., .., \\, : or control characters',
      details: { pointer },
    },
  );
}

function duplicate(pointer: string, what: string, value: string): AgentscmError {
  return new AgentscmError('SCHEMA_TYPE', `${what} ${JSON.stringify(value.slice(0, 80))} appears twice`, {
    hint: 'name each once',
    details: { pointer },
  });
}

/**
 * The rules of a review action beyond its schema (docs/review.md "The review action"):
 * canonical paths, no repeated coverage path or criterion.
 */
export function checkReviewAction(action: ReviewAction, pointer = ''): ReviewAction {
  checkPath(action.policy, `${pointer}/policy`, 'review policy');
  const seen = new Set<string>();
  action.coverage.forEach((path, index) => {
    checkPath(path, `${pointer}/coverage/${index}`, 'coverage path');
    if (seen.has(path)) throw duplicate(`${pointer}/coverage/${index}`, 'coverage path', path);
    seen.add(path);
  });
  const criteria = new Set<string>();
  action.criteria.forEach((row, index) => {
    if (criteria.has(row.criterion))
      throw duplicate(`${pointer}/criteria/${index}/criterion`, 'criterion', row.criterion);
    criteria.add(row.criterion);
  });
  return action;
}

/** Decode a review action alone (strict; the definition decodes it as one step's action). */
export function decodeReviewAction(bytes: Uint8Array): ReviewAction {
  return checkReviewAction(ACTION_DECODER.decode(bytes, REVIEW_LIMITS.maxPolicyBytes + 64 * 1024));
}

/** Decode a policy resource from its exact bytes (refused above 64 KiB before parsing). */
export function decodeReviewPolicy(bytes: Uint8Array): ReviewPolicy {
  const policy = POLICY_DECODER.decode(bytes, REVIEW_LIMITS.maxPolicyBytes);
  policy.exposure.forEach((prefix, index) => checkPath(prefix, `/exposure/${index}`, 'exposure prefix'));
  return policy;
}

/** The policy's identity: SHA-256 of its exact bytes, as a plan binds a packaged resource. */
export function reviewPolicyDigest(bytes: Uint8Array): string {
  return sha256Hex(bytes);
}

/** Whether the policy lets the controller expose `path` (whole-component prefix match). */
export function policyExposes(policy: ReviewPolicy, path: string): boolean {
  return policy.exposure.some((prefix) => isRelativePathWithin(prefix, path));
}

/**
 * Refuse coverage the policy does not expose (REVIEW_COVERAGE_OUTSIDE_POLICY): a review step can
 * never require a path its installed policy keeps from the model.
 */
export function checkCoverageWithinPolicy(action: ReviewAction, policy: ReviewPolicy): void {
  const outside = action.coverage.filter((path) => !policyExposes(policy, path));
  if (outside.length === 0) return;
  throw new AgentscmError(
    'REVIEW_COVERAGE_OUTSIDE_POLICY',
    `${outside.length} coverage path(s) lie outside the policy's exposure, e.g. ` +
      `${JSON.stringify(outside[0]?.slice(0, 80))}`,
    {
      hint:
        'cover only paths below an exposure prefix of the installed review policy, or install a policy that ' +
        'exposes them',
      details: { paths: outside.slice(0, 8) },
    },
  );
}

/** Budgets in declared order. */
export function reviewBudgetsToJson(budgets: ReviewBudgets): JsonObject {
  return {
    model_calls: budgets.model_calls,
    input_bytes: budgets.input_bytes,
    output_bytes: budgets.output_bytes,
    files_exposed: budgets.files_exposed,
    wall_time_ms: budgets.wall_time_ms,
  };
}

/** The action as a JSON value in declared field order (docs/wire.md canonical encoding). */
export function reviewActionToJson(action: ReviewAction): JsonObject {
  return {
    kind: action.kind,
    policy: action.policy,
    coverage: [...action.coverage],
    criteria: action.criteria.map((row) => ({ criterion: row.criterion, description: row.description })),
    budgets: reviewBudgetsToJson(action.budgets),
  };
}
