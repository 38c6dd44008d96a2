/**
 * Every registered wire type with the decoder a caller really uses (its public decode function,
 * including the checks that run after the schema), the schema-only stage of the registry, the
 * type's byte limit and valid seed documents built from the contract fixtures and examples/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { callAgentStateOperation, createAgentState } from '../../../src/agent-state/operations.js';
import { MAX_AGENT_STATE_INPUT_BYTES } from '../../../src/contracts/agent-state.js';
import { decodeCommandRecipe, RECIPE_LIMITS } from '../../../src/contracts/collector/command-recipe.js';
import {
  decodeCollectorDescriptor,
  MAX_COLLECTOR_DESCRIPTOR_BYTES,
} from '../../../src/contracts/collector/descriptor.js';
import { decodeCollectorProfile, MAX_COLLECTOR_PROFILE_BYTES } from '../../../src/contracts/collector/profile.js';
import {
  collectorClaimRequestDecoder,
  collectorDescriptorRequestDecoder,
  collectorFinalizeRequestDecoder,
} from '../../../src/contracts/collector/requests.js';
import type { ErrorCode } from '../../../src/contracts/errors.js';
import {
  entrypointToJson,
  instructionEntrypointDecoder,
  instructionEntrypointResponseDecoder,
  instructionRequestDecoder,
} from '../../../src/contracts/instruction-entrypoint.js';
import type { JsonObject, JsonValue } from '../../../src/contracts/json/json-value.js';
import { allDecoders } from '../../../src/contracts/json/schema-registry.js';
import type { Decoder } from '../../../src/contracts/json/schema.js';
import { parseStrictJson } from '../../../src/contracts/json/strict-json.js';
import { decodeKeyFile, encodeKeyFile, KEY_FILE_MAX_BYTES } from '../../../src/contracts/key-file.js';
import {
  referenceFetchRequestDecoder,
  referenceFetchResponseDecoder,
  referenceLimit,
  schemaMismatch,
} from '../../../src/contracts/named-reference.js';
import {
  decodeReviewCollectorDescriptor,
  MAX_REVIEW_DESCRIPTOR_BYTES,
} from '../../../src/contracts/review/collector-descriptor.js';
import {
  decodeReviewContext,
  MAX_REVIEW_CONTEXT_BYTES,
  reviewContextJson,
} from '../../../src/contracts/review/context.js';
import { attemptToJson, workflowTaskAttemptDecoder } from '../../../src/contracts/task/attempt.js';
import { capabilitiesResponse, capabilitiesResponseDecoder } from '../../../src/contracts/task/capabilities.js';
import type { TaskDecoder } from '../../../src/contracts/task/common.js';
import { taskRecoveryRequestDecoder } from '../../../src/contracts/task/operations.js';
import { qualificationAnswerDecoder } from '../../../src/contracts/task/qualification.js';
import {
  buildRecoveryEnvelope,
  recoveryEnvelopeToJson,
  taskRecoveryEnvelopeDecoder,
} from '../../../src/contracts/task/recovery.js';
import {
  claimRequestToJson,
  mutationRequestToJson,
  subjectRequestDecoder,
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  taskStatusRequestDecoder,
} from '../../../src/contracts/task/requests.js';
import { assertionToJson, taskResultAssertionDecoder } from '../../../src/contracts/task/result.js';
import { subjectToJson, workflowTaskSubjectDecoder } from '../../../src/contracts/task/subject.js';
import { taskToJson, workflowTaskDecoder } from '../../../src/contracts/task/task.js';
import { decodeWorkflowDefinition, WORKFLOW_LIMITS } from '../../../src/contracts/workflow-definition.js';
import { REPO_ROOT } from '../../helpers/cli.js';
import { reviewWireTypes, SEED_ACTION, SEED_REVIEW_DEFINITION } from '../../support/review-seeds.js';
import {
  CRITERIA,
  hex64,
  PASSING_ROWS,
  sampleAssertion,
  sampleAttempt,
  sampleClaim,
  sampleMutation,
  sampleSubject,
  sampleTask,
} from '../../support/task-contracts.js';

export interface WireType {
  /** The registry id (docs/schemas/<id>.schema.json). */
  readonly id: string;
  /** The decode a caller of agentscm goes through: size, strict JSON, schema, then the type's own checks. */
  readonly decode: (bytes: Uint8Array) => unknown;
  /** The schema stage alone (the registry decoder), for bound checks that later rules may refuse for other reasons. */
  readonly schemaStage: (bytes: Uint8Array) => unknown;
  readonly maxBytes: number;
  /** The field checked before the schema, if any. */
  readonly versionField: string | undefined;
  readonly schema: object;
  /** Valid documents; each must decode (checked by the campaign before it mutates them). */
  readonly seeds: readonly JsonValue[];
  /**
   * A public decode that reports every decoding failure under one code of its own (the key file:
   * KEY_FILE_INVALID with the decoding error as its cause).
   */
  readonly wrapperCode?: ErrorCode;
}

const task = sampleTask();
const claim = sampleClaim(task);
const attempt = sampleAttempt(task, claim);
const noExecutorClaim = sampleClaim(task, null);
const assertion = sampleAssertion(task, attempt, PASSING_ROWS);
const agentAssertion = sampleAssertion(
  task,
  sampleAttempt(task, noExecutorClaim),
  [
    {
      criterion: 'tests-pass',
      outcome: 'failed',
      findings: ['exit status 1', 'naïve — ✓ 😀'],
      evidence_digests: [hex64('3')],
    },
    { criterion: 'lint-clean', outcome: 'passed', findings: [], evidence_digests: [] },
    { criterion: 'independent-review', outcome: 'not_claimed', findings: [], evidence_digests: [] },
  ],
  'failed',
);

const recoveryIdentity = {
  request_id: 'claim-1',
  request_kind: 'claim' as const,
  task_id: task.task_id,
  task_digest: hex64('1'),
  attempt_id: 'a-1',
  attempt_digest: hex64('2'),
  execution_operation_id: 'op-1',
};

function exampleDefinition(name: string): JsonValue {
  return parseStrictJson(readFileSync(join(REPO_ROOT, 'examples', 'workflows', name)), {
    maxBytes: WORKFLOW_LIMITS.maxDefinitionBytes,
  });
}

const COMMAND_ACTION: JsonObject = {
  kind: 'command',
  runner: 'runner.json',
  change: { repository: '0123456789abcdef0123456789abcdef', id: 'change-1' },
  change_version: 3n,
  context_digest: hex64('b'),
};

const commandDefinition: JsonObject = {
  version: 1,
  name: 'with-command',
  source: { repository: '0123456789abcdef0123456789abcdef', revision: hex64('a'), policy_epoch: 18446744073709551615n },
  skill: { entrypoint: 'skills/check/SKILL.md', resources: ['skills/check/runner.json'] },
  steps: [
    {
      id: 'guide',
      needs: [],
      required: true,
      action: { kind: 'source_paths', expectations: [{ path: 'skills/check/SKILL.md', sha256: hex64('c') }] },
    },
    { id: 'unit-tests', needs: ['guide'], required: true, action: COMMAND_ACTION },
    { id: 'network', needs: [], required: false, action: { kind: 'require_capability', capability: 'network' } },
  ],
};

const RECIPE: JsonObject = {
  version: 1,
  image: 'local/busybox:1',
  argv: ['sh', '-c', 'echo ok'],
  env: { LANG: 'C.UTF-8', _X1: '' },
  workdir: 'packages/app',
  timeout_ms: 20_000,
  limits: {
    memory_bytes: 64 * 1024 * 1024,
    pids: 64,
    cpu_millis: 1000,
    output_bytes: 64 * 1024,
    scratch_bytes: 1024 * 1024,
  },
  toolchain: 'busybox-1',
  environment: 'posix-sh-offline',
};

const U64_MAX = 18446744073709551615n;
const ORIGIN: JsonObject = { owner_id: 'alice', agent_id: 'agent-1', grant_id: 'g-1', grant_generation: 2n };
const COLLECTOR_EXECUTOR: JsonObject = {
  registration_id: 'reg-9',
  executor_id: 'ci-box',
  registration_epoch: 3n,
  verification_key_id: hex64('e'),
};

const COLLECTOR_DESCRIPTOR: JsonObject = {
  version: 1,
  authority_id: 'fedcba9876543210fedcba9876543210',
  repository_id: '0123456789abcdef0123456789abcdef',
  workflow_profile: 'default',
  collector_profile_id: hex64('b'),
  task: { task_id: 't-unit-tests', task_digest: hex64('1') },
  attempt: {
    attempt_id: 'a-1',
    attempt_digest: hex64('2'),
    fence: U64_MAX,
    execution_operation_id: 'op-1',
    lease_expires_at_ms: 1_800_000_000_000n,
  },
  subject: {
    change_id: 'fix-1',
    change_version: 4n,
    revision: hex64('4'),
    context_digest: hex64('5'),
    policy_epoch: 7n,
    target: 'main',
    requirement_digest: hex64('6'),
  },
  origin: ORIGIN,
  executor: COLLECTOR_EXECUTOR,
  recipe: { ...RECIPE, env: {}, workdir: '.' },
  runtime_identity_digest: hex64('f'),
  upload_request_id: 'up-1',
};

/** A review task's descriptor: the command descriptor's bindings, the installed review and the pinned transport. */
const REVIEW_COLLECTOR_DESCRIPTOR: JsonObject = (() => {
  const { recipe: _recipe, runtime_identity_digest: _runtime, upload_request_id, ...common } = COLLECTOR_DESCRIPTOR;
  return {
    ...common,
    review: { policy_path: 'skills/review/review-policy.json', policy_sha256: hex64('c'), action: SEED_ACTION },
    transport: {
      basis: 'claude-code',
      executable_sha256: hex64('e'),
      provider_scope: 'team-a',
      model: 'claude-sonnet-4-5',
    },
    upload_request_id: upload_request_id as JsonValue,
  };
})();

const COLLECTOR_PROFILE: JsonObject = {
  version: 1,
  kind: 'command',
  repository_id: '0123456789abcdef0123456789abcdef',
  workflow_profile: 'default',
  step_id: 'unit-tests',
  registration_id: 'reg-9',
  registration_epoch: 3n,
  verification_key_id: hex64('e'),
  recipe: { ...RECIPE, env: {}, workdir: '.' },
  recipe_digest: hex64('6'),
  runtime_identity_digest: hex64('f'),
};

const TRANSFER_HEADER: JsonObject = {
  version: 1,
  audience: 'fedcba9876543210fedcba9876543210',
  repository_id: '0123456789abcdef0123456789abcdef',
  collector_profile_id: hex64('b'),
  task_id: 't-unit-tests',
  task_digest: hex64('1'),
  attempt_id: 'a-1',
  attempt_digest: hex64('2'),
  execution_operation_id: 'op-1',
  fence: U64_MAX,
  origin: ORIGIN,
  executor: COLLECTOR_EXECUTOR,
  request_digest: hex64('3'),
  collector: { agentscm_version: '0.2.0', runtime_identity_digest: hex64('f') },
  upload_request_id: 'up-1',
  records: [
    { kind: 'execution_request', length: 59n, digest: hex64('5') },
    { kind: 'execution_record', length: 48n, digest: hex64('6') },
  ],
};

const RECEIPT_SUBJECT: JsonObject = {
  change_id: 'fix-1',
  change_version: 4n,
  revision: hex64('4'),
  context_digest: hex64('5'),
  policy_epoch: 7n,
  target: 'main',
  requirement_digest: hex64('6'),
  plan_digest: hex64('7'),
};

const RECEIPT: JsonObject = {
  version: 2,
  authority_id: 'fedcba9876543210fedcba9876543210',
  repository_id: '0123456789abcdef0123456789abcdef',
  workflow_profile: 'default',
  subject: RECEIPT_SUBJECT,
  state: 'completed',
  tasks: [
    {
      task_id: 't-src',
      task_digest: hex64('8'),
      step_id: 'sources',
      required: true,
      outcome: 'passed',
      result_digest: hex64('9'),
    },
    {
      task_id: 't-unit-tests',
      task_digest: hex64('1'),
      step_id: 'unit-tests',
      required: true,
      outcome: 'passed',
      attempt_id: 'a-1',
      attempt_digest: hex64('2'),
      fence: U64_MAX,
      transfer_digest: hex64('a'),
      collector_profile_id: hex64('b'),
      registration_id: 'reg-9',
      registration_epoch: 3n,
      verification_key_id: hex64('e'),
      origin: ORIGIN,
    },
  ],
};

const KEY_SEED = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);

function taskType(
  decoder: TaskDecoder<unknown>,
  seeds: readonly JsonValue[],
  versionField: string | undefined = 'version',
): Omit<WireType, 'schemaStage'> {
  return {
    id: decoder.id,
    decode: (bytes) => decoder.decode(bytes),
    maxBytes: decoder.maxBytes,
    versionField,
    schema: decoder.schema,
    seeds,
  };
}

const builder = createAgentState({
  agent_id: 'builder',
  backend: 'codex',
  task_id: 'task-1',
  state: 'working',
  blocked_reason: null,
  state_source: 'native',
  scopes: [
    { path: 'src/app', access: 'write' },
    { path: '.', access: 'read' },
  ],
  capabilities: { resume: 'native', fork: 'adapter' },
}) as unknown as JsonObject;
const finished = {
  ...(createAgentState({
    agent_id: 'reviewer',
    backend: 'claude',
    state: 'completed',
    state_source: 'terminal',
  }) as unknown as JsonObject),
  result: {
    outcome: 'succeeded',
    exit_code: 0,
    signal: null,
    changed_paths: ['docs/a.md'],
    scope_violations: [],
    summary: 'naïve ✓',
  },
};
const interrupted = {
  ...finished,
  agent_id: 'killed',
  state: 'failed',
  result: {
    outcome: 'failed',
    exit_code: null,
    signal: 'SIGKILL',
    changed_paths: [],
    scope_violations: ['x/y'],
    summary: '',
  },
};

function agentStateType(id: string, operation: string, seeds: readonly JsonValue[]): Omit<WireType, 'schemaStage'> {
  return {
    id,
    decode: (bytes) => callAgentStateOperation(operation, bytes),
    maxBytes: MAX_AGENT_STATE_INPUT_BYTES,
    versionField: undefined,
    schema: {},
    seeds,
  };
}

const PUBLIC: readonly Omit<WireType, 'schemaStage'>[] = [
  agentStateType('agent-state-conflicts-v1', 'conflicts', [{ agents: [builder, finished] }, { agents: [] }]),
  agentStateType('agent-state-create-v1', 'create', [
    {
      agent_id: 'builder',
      backend: 'codex',
      task_id: 'task-1',
      state: 'blocked',
      blocked_reason: 'conflict',
      state_source: 'adapter',
      scopes: [{ path: 'src', access: 'write' }],
      capabilities: { resume: 'native' },
    },
    { agent_id: 'a', backend: 'b', state: 'queued' },
  ]),
  agentStateType('agent-state-eligible-v1', 'eligible', [{ agents: [builder, finished], require: { resume: true } }]),
  agentStateType('agent-state-reconcile-v1', 'reconcile', [
    { observations: [builder, { ...builder, revision: 2n, state: 'idle' }] },
  ]),
  agentStateType('agent-state-v1', 'validate', [builder, finished, interrupted]),
  taskType(capabilitiesResponseDecoder, [capabilitiesResponse() as unknown as JsonValue], undefined),
  taskType(collectorClaimRequestDecoder, [
    {
      version: 1,
      request_id: 'collect-1',
      agent: { owner_id: 'alice', agent_id: 'claude-1' },
      collector_profile_id: hex64('b'),
      task_id: 't-1',
      task_digest: hex64('1'),
      execution_operation_id: 'op-1',
      requested_lease_ms: 60_000n,
    },
  ]),
  taskType(collectorDescriptorRequestDecoder, [
    { version: 1, agent: { owner_id: 'alice', agent_id: 'claude-1' }, task_id: 't-1', attempt_id: 'a-1' },
  ]),
  taskType(
    qualificationAnswerDecoder,
    [
      {
        qualified: true,
        subject_current: true,
        receipt_digest: hex64('c'),
        revision: hex64('4'),
        tasks: [{ task_id: 't-1', task_digest: hex64('1'), step_id: 'unit-tests', required: true, state: 'succeeded' }],
        failures: [],
        next: { operation: 'none' },
      },
      {
        qualified: false,
        subject_current: true,
        receipt_digest: null,
        revision: hex64('4'),
        tasks: [{ task_id: 't-1', task_digest: hex64('1'), step_id: 'unit-tests', required: true, state: 'pending' }],
        failures: [{ task_id: 't-1', code: 'task_pending' }],
        next: { operation: 'collector_claim', task_id: 't-1' },
      },
      {
        qualified: false,
        subject_current: false,
        receipt_digest: null,
        revision: hex64('4'),
        tasks: [],
        failures: [],
        next: { operation: 'checkpoint' },
      },
    ],
    undefined,
  ),
  taskType(collectorFinalizeRequestDecoder, [{ version: 1, agent: { owner_id: 'alice', agent_id: 'claude-1' } }]),
  {
    id: 'agent-task.collector-descriptor',
    decode: decodeCollectorDescriptor,
    maxBytes: MAX_COLLECTOR_DESCRIPTOR_BYTES,
    versionField: 'version',
    schema: {},
    seeds: [COLLECTOR_DESCRIPTOR],
  },
  {
    id: 'agent-task.review-collector-descriptor',
    decode: decodeReviewCollectorDescriptor,
    maxBytes: MAX_REVIEW_DESCRIPTOR_BYTES,
    versionField: 'version',
    schema: {},
    seeds: [REVIEW_COLLECTOR_DESCRIPTOR],
  },
  {
    id: 'agent-task.collector-profile',
    decode: decodeCollectorProfile,
    maxBytes: MAX_COLLECTOR_PROFILE_BYTES,
    versionField: 'version',
    schema: {},
    seeds: [COLLECTOR_PROFILE],
  },
  taskType(taskClaimRequestDecoder, [claimRequestToJson(claim), claimRequestToJson(noExecutorClaim)]),
  taskType(
    instructionEntrypointResponseDecoder,
    [
      { status: 'entrypoint', entrypoint: entrypointToJson(task.entrypoint) },
      schemaMismatch([2, 3], 1, [1]) as unknown as JsonValue,
    ],
    undefined,
  ),
  taskType(
    instructionEntrypointDecoder,
    [entrypointToJson(task.entrypoint), entrypointToJson(sampleTask(CRITERIA.slice(0, 1)).entrypoint)],
    'schema_version',
  ),
  taskType(instructionRequestDecoder, [{ version: 1, task_id: 't', supported_schema_versions: [1, 2] }]),
  {
    id: 'agent-task.key-file',
    decode: decodeKeyFile,
    maxBytes: KEY_FILE_MAX_BYTES,
    versionField: 'version',
    schema: {},
    seeds: [parseStrictJson(encodeKeyFile(KEY_SEED), { maxBytes: KEY_FILE_MAX_BYTES })],
    wrapperCode: 'KEY_FILE_INVALID',
  },
  taskType(taskMutationRequestDecoder, [
    mutationRequestToJson(sampleMutation(task, attempt, 'cancel')),
    mutationRequestToJson(sampleMutation(task, attempt, 'heartbeat')),
  ]),
  taskType(taskRecoveryEnvelopeDecoder, [
    recoveryEnvelopeToJson(
      buildRecoveryEnvelope(recoveryIdentity, {
        observed_state: 'replaced',
        confirmed_effects: [],
        unresolved_effects: ['execution_may_still_run'],
        supersession: { old_fence: 3n, new_fence: 4n },
        fence: 3n,
      }),
    ),
    recoveryEnvelopeToJson(
      buildRecoveryEnvelope(recoveryIdentity, {
        observed_state: 'leased',
        confirmed_effects: ['attempt_claimed'],
        unresolved_effects: [],
        supersession: null,
        fence: 7n,
      }),
    ),
  ]),
  taskType(taskRecoveryRequestDecoder, [
    { version: 1, request_kind: 'claim', request: claimRequestToJson(claim) },
    {
      version: 1,
      request_kind: 'heartbeat',
      request: mutationRequestToJson(sampleMutation(task, attempt, 'heartbeat')),
    },
    { version: 1, request_kind: 'result', request: assertionToJson(assertion) },
  ]),
  taskType(referenceFetchRequestDecoder, [
    {
      version: 1,
      task_id: 't',
      task_digest: hex64('1'),
      name: 'guide',
      expected_sha256: hex64('2'),
      expected_schema_version: 1,
      agent: { owner_id: 'o', agent_id: 'a' },
    },
  ]),
  taskType(
    referenceFetchResponseDecoder,
    [
      { status: 'available', name: 'guide', sha256: hex64('1'), byte_length: 11, content: 'naïve ✓\n' },
      { status: 'missing', name: 'g' },
      { status: 'denied', name: 'g', code: 'not_authorized' },
      { status: 'uncertain', name: 'g', code: 'store_busy' },
      referenceLimit('guide', 1n << 62n) as unknown as JsonValue,
      schemaMismatch([2], 1, [1]) as unknown as JsonValue,
    ],
    undefined,
  ),
  taskType(subjectRequestDecoder, [{ change_id: 'c1' }, { change_id: 'fix-parser.2' }]),
  taskType(taskStatusRequestDecoder, [
    { version: 1, task_id: 't', task_digest: hex64('1'), attempt_id: 'a', attempt_digest: hex64('2') },
  ]),
  taskType(taskResultAssertionDecoder, [assertionToJson(assertion), assertionToJson(agentAssertion)]),
  taskType(workflowTaskAttemptDecoder, [attemptToJson(attempt), attemptToJson(sampleAttempt(task, noExecutorClaim))]),
  taskType(workflowTaskSubjectDecoder, [subjectToJson(sampleSubject())]),
  taskType(workflowTaskDecoder, [taskToJson(task)]),
  {
    id: 'command-recipe',
    decode: decodeCommandRecipe,
    maxBytes: RECIPE_LIMITS.maxRecipeBytes,
    versionField: 'version',
    schema: {},
    seeds: [RECIPE, { ...RECIPE, env: {}, workdir: '.' }],
  },
  {
    id: 'review-context',
    decode: decodeReviewContext,
    maxBytes: MAX_REVIEW_CONTEXT_BYTES,
    versionField: 'version',
    schema: {},
    seeds: [
      reviewContextJson({
        repository: '0123456789abcdef0123456789abcdef',
        change: { repository: '0123456789abcdef0123456789abcdef', id: 'change-1' },
        change_version: 3n,
        revision: hex64('a'),
        policy_epoch: 0n,
        recipe_path: 'skills/check/runner.json',
        recipe_digest: hex64('d'),
        toolchain: 'busybox-1',
        environment: 'posix-sh-offline',
      }),
    ],
  },
  // The action schemas are reached through the definition; alone they have the definition's limit.
  {
    id: 'skill-workflow-action-command',
    decode: actionStage('skill-workflow-action-command'),
    maxBytes: WORKFLOW_LIMITS.maxDefinitionBytes,
    versionField: undefined,
    schema: {},
    seeds: [COMMAND_ACTION],
  },
  {
    id: 'skill-workflow-action-require-capability',
    decode: actionStage('skill-workflow-action-require-capability'),
    maxBytes: WORKFLOW_LIMITS.maxDefinitionBytes,
    versionField: undefined,
    schema: {},
    seeds: [{ kind: 'require_capability', capability: 'network' }],
  },
  {
    id: 'skill-workflow-action-source-paths',
    decode: actionStage('skill-workflow-action-source-paths'),
    maxBytes: WORKFLOW_LIMITS.maxDefinitionBytes,
    versionField: undefined,
    schema: {},
    seeds: [
      {
        kind: 'source_paths',
        expectations: [
          { path: 'a/b.txt', sha256: hex64('e') },
          { path: 'SKILL.md', sha256: hex64('f') },
        ],
      },
    ],
  },
  {
    id: 'skill-workflow-definition',
    decode: decodeWorkflowDefinition,
    maxBytes: WORKFLOW_LIMITS.maxDefinitionBytes,
    versionField: 'version',
    schema: {},
    seeds: [
      exampleDefinition('verify-native-workflow.json'),
      exampleDefinition('verify-with-omission.json'),
      commandDefinition,
      SEED_REVIEW_DEFINITION,
    ],
  },
];

function registryDecoder(id: string): Decoder<unknown> {
  const decoder = allDecoders().find((d) => d.id === id);
  if (decoder === undefined) throw new Error(`no registered decoder ${id}`);
  return decoder;
}

function actionStage(id: string): (bytes: Uint8Array) => unknown {
  return (bytes) => registryDecoder(id).decode(bytes, WORKFLOW_LIMITS.maxDefinitionBytes);
}

/**
 * Types whose only decoder in the contracts layer is the registry's (their other rules live in
 * a higher layer, e.g. src/hub/config.ts): the schema stage is the decoder fuzzed here. They are
 * named by id so that this file does not import their modules; the limits are the modules'
 * constants (HUB_CONFIG_MAX_BYTES, HUB_JSON_BODY_MAX_BYTES, TRANSFER_LIMITS.maxHeaderBytes,
 * MAX_RECEIPT_BYTES).
 */
const SCHEMA_ONLY: readonly { id: string; maxBytes: number; seeds: readonly JsonValue[] }[] = [
  { id: 'agent-task.collector-transfer-header', maxBytes: 65_536, seeds: [TRANSFER_HEADER] },
  {
    id: 'agent-task.workflow-receipt-v2',
    maxBytes: 64 * 1024,
    seeds: [RECEIPT, { ...RECEIPT, tasks: (RECEIPT.tasks as JsonObject[]).slice(0, 1) }],
  },
  // The receipt bundle's manifest (RECEIPT_BUNDLE_LIMITS.maxManifestBytes); its canonical-form rule sits in decodeBundleManifest.
  {
    id: 'receipt-bundle',
    maxBytes: 65_536,
    seeds: [
      {
        version: 1,
        receipt: { receipt_digest: hex64('c'), length: 1234n },
        transfers: [{ task_id: 't-unit-tests', transfer_digest: hex64('a'), length: 16n * 1024n * 1024n }],
        registrations: [
          {
            registration_id: 'reg-9',
            repository_id: '0123456789abcdef0123456789abcdef',
            workflow_profile: 'default',
            step_id: 'unit-tests',
            executor_id: 'ci-box',
            registration_epoch: 3n,
            public_key: hex64('d'),
            verification_key_id: hex64('e'),
          },
        ],
      },
      { version: 1, receipt: { receipt_digest: hex64('c'), length: 65_536n }, transfers: [], registrations: [] },
    ],
  },
  {
    id: 'hub.agent-task-request',
    maxBytes: 512 * 1024,
    seeds: [
      {
        operation: 'claim',
        input: claimRequestToJson(claim),
        subject: { change_id: 'change-1', context_digest: hex64('b') },
      },
      { operation: 'capabilities', input: null },
    ],
  },
  {
    id: 'hub.execution-config',
    maxBytes: 256 * 1024,
    seeds: [
      {
        version: 1,
        listen: '127.0.0.1:8080',
        agent_task_profiles: [
          {
            repository_id: 'alice/demo',
            profile_id: 'default',
            native_repository: '0123456789abcdef0123456789abcdef',
            data_dir: '/srv/agentscm',
            target: 'main',
            requirement_digest: hex64('c'),
            publish_forge_status: false,
          },
        ],
      },
      {
        version: 1,
        agent_task_profiles: [
          {
            repository_id: 'a/b',
            profile_id: 'p',
            native_repository: '0123456789abcdef0123456789abcdef',
            data_dir: '/d',
            target: 't',
            requirement_digest: hex64('d'),
          },
        ],
      },
    ],
  },
];

function allTypes(): Omit<WireType, 'schemaStage'>[] {
  const registered = new Set(allDecoders().map((d) => d.id));
  const schemaOnly = SCHEMA_ONLY.filter((t) => registered.has(t.id)).map((t) => ({
    id: t.id,
    decode: (bytes: Uint8Array) => registryDecoder(t.id).decode(bytes, t.maxBytes),
    maxBytes: t.maxBytes,
    versionField: undefined,
    schema: {},
    seeds: t.seeds,
  }));
  return [...PUBLIC, ...reviewWireTypes(), ...schemaOnly];
}

/** Registered decoders the campaign has no entry (no seeds) for; must be empty. */
export function uncoveredDecoders(): string[] {
  const covered = new Set(allTypes().map((t) => t.id));
  return allDecoders()
    .map((d) => d.id)
    .filter((id) => !covered.has(id));
}

/**
 * The campaign's types, one per registered decoder that has an entry here, sorted by id. An
 * entry whose decoder is not registered (a schema that was removed) is left out.
 */
export function wireTypes(): readonly WireType[] {
  const registered = new Set(allDecoders().map((d) => d.id));
  return allTypes()
    .filter((t) => registered.has(t.id))
    .map((t) => {
      const decoder = registryDecoder(t.id);
      return {
        ...t,
        schema: decoder.schema,
        versionField: decoder.options.versionField,
        schemaStage: (bytes: Uint8Array) => decoder.decode(bytes, t.maxBytes),
      };
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
