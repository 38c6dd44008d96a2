/**
 * The public exports of the contracts/task family (docs/architecture.md "Layers"). Modules of
 * src/ import the file they need directly, so a command loads only what it uses; this list is the
 * family's surface at a glance and what a consumer outside src/ imports.
 */
export {
  ATTEMPT_SCHEMA,
  attemptDigest,
  attemptToJson,
  checkAttempt,
  encodeAttempt,
  validateForClaim,
  workflowTaskAttemptDecoder,
} from './attempt.js';
export type { WorkflowTaskAttempt } from './attempt.js';
export {
  CAPABILITIES_RESPONSE_SCHEMA,
  TASK_OPERATIONS,
  capabilitiesResponse,
  capabilitiesResponseDecoder,
} from './capabilities.js';
export type { CapabilitiesResponse } from './capabilities.js';
export {
  AGENT_SCHEMA,
  EXECUTOR_SCHEMA,
  HEX128_SCHEMA,
  HEX64_SCHEMA,
  ID_SCHEMA,
  NULLABLE_EXECUTOR_SCHEMA,
  POSITIVE_U64_SCHEMA,
  REPOSITORY_SCHEMA,
  SUPPORTED_SCHEMA_VERSIONS,
  TASK_CAPABILITY,
  TASK_CONTRACT_VERSION,
  U64_SCHEMA,
  VERSION_SCHEMA,
  agentToJson,
  checkUnique,
  checkUtf8Bound,
  defineTaskDecoder,
  executorToJson,
  hexToBytes,
  sameAgent,
  sameExecutor,
  utf8Length,
} from './common.js';
export type { AgentRef, ExecutorBinding, TaskDecoder, TaskDecoderOptions } from './common.js';
export { RECOVERY_REQUEST_SCHEMA, recoveredRequestOf, taskRecoveryRequestDecoder } from './operations.js';
export type { RecoveredRequest, TaskRecoveryRequest } from './operations.js';
export {
  MAX_QUALIFICATION_BYTES,
  MAX_QUALIFICATION_FAILURES,
  MAX_QUALIFICATION_TASKS,
  QUALIFICATION_ANSWER_SCHEMA,
  QUALIFICATION_FAILURE_CODES,
  QUALIFICATION_NEXT_OPERATIONS,
  QUALIFICATION_TASK_STATES,
  checkQualificationAnswer,
  qualificationAnswerDecoder,
  qualificationToJson,
} from './qualification.js';
export type {
  QualificationAnswer,
  QualificationFailure,
  QualificationFailureCode,
  QualificationNext,
  QualificationTask,
  QualificationTaskState,
} from './qualification.js';
export {
  CONFIRMED_EFFECTS,
  OBSERVED_STATES,
  RECOVERY_ACTIONS,
  RECOVERY_DISPOSITIONS,
  RECOVERY_ENVELOPE_SCHEMA,
  RECOVERY_REQUEST_KINDS,
  UNRESOLVED_EFFECTS,
  buildRecoveryEnvelope,
  checkRecoveryEnvelope,
  checkRecoveryFacts,
  classifyRecovery,
  mayRetryIdentical,
  permittedActions,
  recoveryEnvelopeToJson,
  taskRecoveryEnvelopeDecoder,
} from './recovery.js';
export type {
  ConfirmedEffect,
  FenceSupersession,
  ObservedState,
  RecoveryAction,
  RecoveryDisposition,
  RecoveryFacts,
  RecoveryIdentity,
  RecoveryRequestKind,
  TaskRecoveryEnvelope,
  UnresolvedEffect,
} from './recovery.js';
export {
  CLAIM_REQUEST_SCHEMA,
  LEASE_MS_SCHEMA,
  MAX_LEASE_MS,
  MAX_REASON_BYTES,
  MAX_REQUEST_BYTES,
  MUTATION_ACTIONS,
  MUTATION_REQUEST_SCHEMA,
  STATUS_REQUEST_SCHEMA,
  checkFence,
  checkLeaseMs,
  claimRequestDigest,
  claimRequestToJson,
  issuedLeaseMs,
  mutationRequestDigest,
  mutationRequestToJson,
  statusRequestToJson,
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  taskStatusRequestDecoder,
} from './requests.js';
export type { MutationAction, TaskClaimRequest, TaskMutationRequest, TaskStatusRequest } from './requests.js';
export {
  ASSERTION_OUTCOMES,
  ASSERTION_SCHEMA,
  CRITERION_OUTCOMES,
  CRITERION_RESULT_SCHEMA,
  MAX_ASSERTION_BYTES,
  MAX_ASSERTION_CRITERIA,
  MAX_EVIDENCE_DIGESTS,
  MAX_FINDINGS,
  MAX_FINDING_BYTES,
  PROVENANCE_SCHEMA,
  WIRE_TRUST_CLASSES,
  assertionToJson,
  checkAssertion,
  criterionResultToJson,
  encodeAssertion,
  resultRequestDigest,
  taskResultAssertionDecoder,
  validateAssertionForTask,
} from './result.js';
export type {
  AssertionOutcome,
  AssertionSummary,
  CriterionOutcome,
  CriterionResult,
  ExecutorProvenance,
  TaskResultAssertion,
  TrustClass,
} from './result.js';
export { SUBJECT_FIELDS, SUBJECT_SCHEMA, sameSubject, subjectToJson, workflowTaskSubjectDecoder } from './subject.js';
export type { WorkflowTaskSubject } from './subject.js';
export { MAX_NEEDS, TASK_SCHEMA, checkTask, encodeTask, taskDigest, taskToJson, workflowTaskDecoder } from './task.js';
export type { WorkflowTask } from './task.js';
