import assert from 'node:assert/strict';
import test from 'node:test';

import { digestCanonical, DOMAINS } from '../../src/contracts/digest.js';
import { AgentscmError } from '../../src/contracts/errors.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import {
  checkCoverageWithinPolicy,
  decodeReviewAction,
  decodeReviewPolicy,
  REVIEW_LIMITS,
  reviewActionToJson,
} from '../../src/contracts/review/policy.js';
import {
  decodeReviewRecord,
  MAX_REVIEW_RECORD_BYTES,
  reviewRecordDigest,
  reviewRecordToJson,
} from '../../src/contracts/review/record.js';
import {
  decodeReviewRequest,
  decodeReviewResponse,
  reviewRequestDigest,
  reviewRequestToJson,
  reviewTicket,
  validateTransportIdentity,
} from '../../src/contracts/review/request.js';
import { decodeWorkflowDefinition, encodeWorkflowDefinition } from '../../src/contracts/workflow-definition.js';
import { compileStructure } from '../../src/workflows/plan.js';
import {
  SEED_ACTION,
  SEED_POLICY,
  SEED_RECORD,
  SEED_REQUEST,
  SEED_RESPONSE,
  SEED_REVIEW_DEFINITION,
} from '../support/review-seeds.js';

const bytes = (value: JsonValue): Buffer => encodeCanonical(value);

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentscmError) return error.code;
    throw error;
  }
  return 'accepted';
}

test('request, record and action decode strictly and re-encode to the same canonical bytes', () => {
  const request = decodeReviewRequest(bytes(SEED_REQUEST));
  assert.deepEqual(encodeCanonical(reviewRequestToJson(request)), bytes(SEED_REQUEST));
  const record = decodeReviewRecord(bytes(SEED_RECORD));
  assert.deepEqual(encodeCanonical(reviewRecordToJson(record)), bytes(SEED_RECORD));
  const action = decodeReviewAction(bytes(SEED_ACTION));
  assert.deepEqual(encodeCanonical(reviewActionToJson(action)), bytes(SEED_ACTION));
});

test('digests are domain-separated: the request, ticket and record digests use their own domains', () => {
  const request = decodeReviewRequest(bytes(SEED_REQUEST));
  const digest = reviewRequestDigest(request);
  assert.equal(digest, digestCanonical(DOMAINS.reviewRequest, SEED_REQUEST));
  assert.notEqual(digest, digestCanonical(DOMAINS.reviewRecord, SEED_REQUEST));
  assert.notEqual(reviewTicket(request.review_id, 0, digest), reviewTicket(request.review_id, 1, digest));
  const record = decodeReviewRecord(bytes(SEED_RECORD));
  assert.equal(reviewRecordDigest(record), digestCanonical(DOMAINS.reviewRecord, SEED_RECORD));
});

test('unknown fields, duplicate keys and an oversize record are refused, the size before parsing', () => {
  assert.equal(
    code(() => decodeReviewRequest(bytes({ ...SEED_REQUEST, budget: 99 }))),
    'SCHEMA_UNKNOWN_FIELD',
  );
  assert.equal(
    code(() => decodeReviewResponse(Buffer.from('{"version":1,"version":1,"verdicts":[],"findings":[]}'), 1024)),
    'JSON_DUPLICATE_KEY',
  );
  // A response may not extend anything: a budget member is an unknown field, not an instruction.
  assert.equal(
    code(() => decodeReviewResponse(bytes({ ...SEED_RESPONSE, budgets: { model_calls: 64 } }), 4096)),
    'SCHEMA_UNKNOWN_FIELD',
  );
  // The response bound is the caller's remaining output budget.
  assert.equal(
    code(() => decodeReviewResponse(bytes(SEED_RESPONSE), 10)),
    'INPUT_TOO_LARGE',
  );
  const huge = Buffer.alloc(MAX_REVIEW_RECORD_BYTES + 1, 0x20);
  assert.equal(
    code(() => decodeReviewRecord(huge)),
    'INPUT_TOO_LARGE',
  );
});

test('a review action with a repeated coverage path or criterion, or a non-canonical path, is refused', () => {
  assert.equal(
    code(() => decodeReviewAction(bytes({ ...SEED_ACTION, coverage: ['src/a.ts', 'src/a.ts'] }))),
    'SCHEMA_TYPE',
  );
  const criteria = SEED_ACTION.criteria as JsonValue[];
  assert.equal(
    code(() => decodeReviewAction(bytes({ ...SEED_ACTION, criteria: [criteria[0] ?? null, criteria[0] ?? null] }))),
    'SCHEMA_TYPE',
  );
  assert.equal(
    code(() => decodeReviewAction(bytes({ ...SEED_ACTION, coverage: ['src/../etc/passwd'] }))),
    'PATH_INVALID',
  );
  assert.equal(
    code(() =>
      decodeReviewAction(
        bytes({
          ...SEED_ACTION,
          budgets: { ...(SEED_ACTION.budgets as object), model_calls: REVIEW_LIMITS.maxModelCalls + 1 },
        }),
      ),
    ),
    'SCHEMA_BOUND',
  );
});

test('coverage outside the policy exposure is REVIEW_COVERAGE_OUTSIDE_POLICY', () => {
  const policy = decodeReviewPolicy(bytes(SEED_POLICY));
  const inside = decodeReviewAction(bytes(SEED_ACTION));
  checkCoverageWithinPolicy(inside, policy);
  const outside = decodeReviewAction(bytes({ ...SEED_ACTION, coverage: ['src/a.ts', 'secrets/key.pem', 'srcx/b.ts'] }));
  assert.equal(
    code(() => checkCoverageWithinPolicy(outside, policy)),
    'REVIEW_COVERAGE_OUTSIDE_POLICY',
  );
});

test('a transport identity with a malformed model is REVIEW_TRANSPORT_INVALID', () => {
  assert.equal(
    code(() =>
      validateTransportIdentity({
        basis: 'claude-code',
        executable_sha256: null,
        provider_scope: 'p',
        model: '--dangerously-skip-permissions',
      }),
    ),
    'REVIEW_TRANSPORT_INVALID',
  );
});

test('a definition with a review step decodes, re-encodes and compiles structurally; a policy that is not a declared resource is REVIEW_STEP_INVALID', () => {
  const definition = decodeWorkflowDefinition(bytes(SEED_REVIEW_DEFINITION));
  assert.equal(definition.steps[0]?.action.kind, 'review');
  assert.deepEqual(Buffer.from(encodeWorkflowDefinition(definition)), bytes(SEED_REVIEW_DEFINITION));
  assert.deepEqual(compileStructure(definition).order, [0]);
  const undeclared = decodeWorkflowDefinition(
    bytes({ ...SEED_REVIEW_DEFINITION, skill: { entrypoint: 'skills/review/SKILL.md', resources: [] } }),
  );
  assert.equal(
    code(() => compileStructure(undeclared)),
    'REVIEW_STEP_INVALID',
  );
  // The action's own rules apply inside a definition, at the step's pointer.
  const repeated = {
    ...SEED_REVIEW_DEFINITION,
    steps: [{ id: 'review', needs: [], required: true, action: { ...SEED_ACTION, coverage: ['a', 'a'] } }],
  };
  assert.throws(
    () => decodeWorkflowDefinition(bytes(repeated)),
    (error: AgentscmError) => error.code === 'SCHEMA_TYPE' && error.details?.pointer === '/steps/0/action/coverage/1',
  );
});
