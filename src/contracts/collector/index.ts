/**
 * The public exports of the contracts/collector family (docs/architecture.md "Layers"). Modules of
 * src/ import the file they need directly, so a command loads only what it uses; this list is the
 * family's surface at a glance and what a consumer outside src/ imports.
 */
export {
  COMMAND_RECIPE_DECODER,
  COMMAND_RECIPE_SCHEMA,
  COMMAND_RECIPE_VERSION,
  RECIPE_LIMITS,
  SOURCE_MOUNT,
  commandRecipeDigest,
  containerWorkdir,
  decodeCommandRecipe,
} from './command-recipe.js';
export type { CommandRecipe, CommandRecipeLimits } from './command-recipe.js';
export {
  AUTHORITY_ID_SCHEMA,
  COLLECTOR_DESCRIPTOR_SCHEMA,
  COLLECTOR_DESCRIPTOR_VERSION,
  MAX_COLLECTOR_DESCRIPTOR_BYTES,
  ORIGIN_SCHEMA,
  collectorDescriptorToJson,
  decodeCollectorDescriptor,
  descriptorBindingsToJson,
  encodeCollectorDescriptor,
  originToJson,
  recipeToJson,
  validateCollectorDescriptor,
} from './descriptor.js';
export type { CollectorDescriptor, DescriptorAttempt, DescriptorSubject, DescriptorTask } from './descriptor.js';
export {
  DEFAULT_TASK_PROFILE,
  bindingOf,
  matchesBinding,
  scopeOfSubject,
  validateScopeAndBinding,
} from './executor-enrollment.js';
export type { ExecutorEnrollment, ExecutorRevocation, ExecutorScope } from './executor-enrollment.js';
export { observationDigest, observationSigningBytes, signObservation, verifyObservation } from './observation.js';
export type { ObservationVerification } from './observation.js';
export {
  COLLECTOR_PROFILE_SCHEMA,
  COLLECTOR_PROFILE_VERSION,
  MAX_COLLECTOR_PROFILE_BYTES,
  PROFILE_BINDING_PROPERTIES,
  collectorProfileId,
  collectorProfileToJson,
  decodeCollectorProfile,
  validateCollectorProfile,
} from './profile.js';
export type { CollectorProfile } from './profile.js';
export {
  COLLECTOR_CLAIM_REQUEST_SCHEMA,
  COLLECTOR_DESCRIPTOR_REQUEST_SCHEMA,
  collectorClaimRequestDecoder,
  collectorDescriptorRequestDecoder,
  collectorFinalizeRequestDecoder,
} from './requests.js';
export type { CollectorClaimRequest, CollectorDescriptorRequest, CollectorFinalizeRequest } from './requests.js';
export {
  OUTPUT_TAIL_LIMITS,
  OUTPUT_TAIL_KIND,
  buildOutputTail,
  checkOutputTailCounts,
  decodeOutputTail,
  encodeOutputTail,
  outputTailToJson,
  showOutputTail,
} from './output-tail.js';
export type { CommandOutputTail, ShownOutputTail, StreamTail } from './output-tail.js';
export {
  ACCEPTED_RECORD_SEQUENCE,
  OUTPUT_TAIL_RECORD_KIND,
  MAX_REVIEW_TRANSFER_REQUESTS,
  TRANSFER_HEADER_SCHEMA,
  TRANSFER_LIMITS,
  TRANSFER_MAGIC,
  TRANSFER_RECORD_KINDS,
  TRANSFER_VERSION,
  checkTransferSignature,
  decodeTransferHeader,
  encodeTransferEnvelope,
  encodeTransferHeader,
  frameTransferEnvelope,
  readTransferEnvelope,
  readTransferPrefix,
  signTransferHeader,
  transferDigest,
  transferHeaderDigest,
  transferHeaderToJson,
  transferKindOf,
  transferRecordEntry,
  validateTransferHeader,
  verifyTransferEnvelope,
} from './transfer.js';
export type {
  TransferCollector,
  TransferEnvelope,
  TransferErrorCode,
  TransferHeader,
  TransferKind,
  TransferPrefix,
  TransferRecord,
  TransferRecordEntry,
  TransferRecordKind,
  VerifiedTransferEnvelope,
} from './transfer.js';
