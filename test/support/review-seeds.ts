/**
 * Valid review documents: the seeds of the malformed-input campaign (test/hostile/fuzz) and the
 * samples of the review contract tests.
 */
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import { allDecoders } from '../../src/contracts/json/schema-registry.js';
import {
  decodeReviewAction,
  decodeReviewPolicy,
  REVIEW_ACTION_DECODER,
  REVIEW_LIMITS,
} from '../../src/contracts/review/policy.js';
import { decodeReviewCollectorProfile, MAX_REVIEW_PROFILE_BYTES } from '../../src/contracts/review/profile.js';
import {
  decodeReviewObservation,
  decodeReviewRecord,
  MAX_REVIEW_OBSERVATION_BYTES,
  MAX_REVIEW_RECORD_BYTES,
} from '../../src/contracts/review/record.js';
import {
  decodeReviewRequest,
  decodeReviewResponse,
  MAX_REVIEW_REQUEST_BYTES,
  REVIEW_RESPONSE_FORMAT,
} from '../../src/contracts/review/request.js';

const hex = (c: string): string => c.repeat(64);

export const SEED_ACTION: JsonObject = {
  kind: 'review',
  policy: 'review-policy.json',
  coverage: ['src/a.ts', 'src/naïve.txt'.replace('ï', 'i')],
  criteria: [
    { criterion: 'correctness', description: 'The code does what its comments say.' },
    { criterion: 'no-secrets', description: 'No credential or key is committed — ✓.' },
  ],
  budgets: { model_calls: 4, input_bytes: 65536, output_bytes: 16384, files_exposed: 8, wall_time_ms: 60000 },
};

export const SEED_POLICY: JsonObject = {
  version: 1,
  instructions: 'Review the excerpts against every criterion.\nAnswer only with the response envelope.',
  exposure: ['src', 'docs/guide.md'],
  max_excerpt_bytes: 4096,
  max_call_excerpt_bytes: 8192,
  call_timeout_ms: 30000,
};

const IDENTITY: JsonObject = {
  basis: 'claude-code',
  executable_sha256: hex('e'),
  provider_scope: 'team-a',
  model: 'claude-sonnet-4-5',
};

export const SEED_REQUEST: JsonObject = {
  version: 1,
  kind: 'review_request',
  review_id: hex('1'),
  call_index: 0,
  repository: '0123456789abcdef0123456789abcdef',
  revision: hex('a'),
  policy_sha256: hex('b'),
  transport: IDENTITY,
  instructions: 'Review.',
  criteria: [{ criterion: 'correctness', description: 'Correct.' }],
  excerpts: [
    { path: 'src/a.ts', file_sha256: hex('c'), file_bytes: 12, offset: 0, length: 12, text: 'let a = 1;\n\u2028' },
  ],
  response_format: REVIEW_RESPONSE_FORMAT,
};

export const SEED_RESPONSE: JsonObject = {
  version: 1,
  verdicts: [{ criterion: 'correctness', verdict: 'fail' }],
  findings: [{ criterion: 'correctness', path: 'src/a.ts', line: 1, severity: 'blocking', message: 'naïve 😀 bound' }],
};

export const SEED_OBSERVATION: JsonObject = {
  status: 'answered',
  response: '{"version":1}',
  response_sha256: hex('d'),
  response_bytes: 13,
  exit_code: 0,
  elapsed_ms: 12,
  executable_before: hex('e'),
  executable_after: hex('e'),
  detail: null,
};

export const SEED_RECORD: JsonObject = {
  version: 1,
  kind: 'review_record',
  review_id: hex('1'),
  repository: '0123456789abcdef0123456789abcdef',
  revision: hex('a'),
  policy_sha256: hex('b'),
  action: SEED_ACTION,
  transport: IDENTITY,
  calls: [
    {
      call_index: 0,
      request_digest: hex('2'),
      ticket: hex('3'),
      exposed: ['src/a.ts'],
      observation: SEED_OBSERVATION,
      effect: 'response_invalid',
    },
    {
      call_index: 1,
      request_digest: hex('4'),
      ticket: hex('5'),
      exposed: [],
      observation: {
        ...SEED_OBSERVATION,
        status: 'uncertain',
        response: null,
        response_sha256: null,
        response_bytes: 0,
        exit_code: null,
        executable_after: null,
        detail: 'reserved, never answered',
      },
      effect: 'not_answered',
    },
  ],
  usage: { model_calls: 2, input_bytes: 900, output_bytes: 13, files_exposed: 1, wall_time_ms: 12 },
  coverage: [
    { path: 'src/a.ts', file_sha256: hex('c'), file_bytes: 12, covered_bytes: 0, state: 'not_covered' },
    { path: 'src/naive.txt', file_sha256: null, file_bytes: 0, covered_bytes: 0, state: 'missing' },
  ],
  criteria: [
    { criterion: 'correctness', outcome: 'not_assessed' },
    { criterion: 'no-secrets', outcome: 'not_assessed' },
  ],
  findings: [],
  outcome: 'uncertain',
  reasons: ['coverage_incomplete', 'response_invalid', 'call_uncertain'],
};

export const SEED_PROFILE: JsonObject = {
  version: 1,
  kind: 'finite_review',
  repository_id: '0123456789abcdef0123456789abcdef',
  workflow_profile: 'default',
  step_id: 'review',
  registration_id: 'reg-9',
  registration_epoch: 3n,
  verification_key_id: hex('e'),
  transport: IDENTITY,
  policy_sha256: hex('b'),
  coverage: ['src/a.ts', 'src/naive.txt'],
  budgets: SEED_ACTION.budgets as JsonObject,
};

interface SeedType {
  readonly id: string;
  readonly decode: (bytes: Uint8Array) => unknown;
  readonly maxBytes: number;
  readonly versionField: string | undefined;
  readonly schema: object;
  readonly seeds: readonly JsonValue[];
}

function registered(id: string, maxBytes: number): (bytes: Uint8Array) => unknown {
  return (bytes) => {
    const decoder = allDecoders().find((d) => d.id === id);
    if (decoder === undefined) throw new Error(`no registered decoder ${id}`);
    return decoder.decode(bytes, maxBytes);
  };
}

/** The review wire types of the malformed-input campaign, each through its public decode. */
export function reviewWireTypes(): readonly SeedType[] {
  return [
    {
      id: 'review-policy',
      decode: decodeReviewPolicy,
      maxBytes: REVIEW_LIMITS.maxPolicyBytes,
      versionField: 'version',
      schema: {},
      seeds: [SEED_POLICY],
    },
    {
      id: 'review-request',
      decode: decodeReviewRequest,
      maxBytes: MAX_REVIEW_REQUEST_BYTES,
      versionField: 'version',
      schema: {},
      seeds: [SEED_REQUEST],
    },
    {
      id: 'review-response',
      decode: (bytes) => decodeReviewResponse(bytes, REVIEW_LIMITS.maxResponseBytes),
      maxBytes: REVIEW_LIMITS.maxResponseBytes,
      versionField: 'version',
      schema: {},
      seeds: [SEED_RESPONSE, { version: 1, verdicts: [{ criterion: 'c', verdict: 'pass' }], findings: [] }],
    },
    {
      id: 'review-record',
      decode: decodeReviewRecord,
      maxBytes: MAX_REVIEW_RECORD_BYTES,
      versionField: 'version',
      schema: {},
      seeds: [SEED_RECORD],
    },
    {
      id: 'review-call-observation',
      decode: decodeReviewObservation,
      maxBytes: MAX_REVIEW_OBSERVATION_BYTES,
      versionField: undefined,
      schema: {},
      seeds: [SEED_OBSERVATION],
    },
    {
      id: 'review-transport-identity',
      decode: registered('review-transport-identity', 4096),
      maxBytes: 4096,
      versionField: undefined,
      schema: {},
      seeds: [IDENTITY, { ...IDENTITY, basis: 'fixture', executable_sha256: null }],
    },
    {
      id: 'agent-task.review-collector-profile',
      decode: decodeReviewCollectorProfile,
      maxBytes: MAX_REVIEW_PROFILE_BYTES,
      versionField: 'version',
      schema: {},
      seeds: [SEED_PROFILE],
    },
    {
      id: REVIEW_ACTION_DECODER.id,
      decode: decodeReviewAction,
      maxBytes: REVIEW_LIMITS.maxPolicyBytes + 64 * 1024,
      versionField: undefined,
      schema: {},
      seeds: [SEED_ACTION],
    },
  ];
}

/** A definition with a review step (it decodes; compiling it into a plan is refused). */
export const SEED_REVIEW_DEFINITION: JsonObject = {
  version: 1,
  name: 'with-review',
  source: { repository: '0123456789abcdef0123456789abcdef', revision: hex('a'), policy_epoch: 0 },
  skill: { entrypoint: 'skills/review/SKILL.md', resources: ['skills/review/review-policy.json'] },
  steps: [{ id: 'review', needs: [], required: true, action: SEED_ACTION }],
};
