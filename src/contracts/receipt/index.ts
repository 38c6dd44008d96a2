/**
 * The public exports of the contracts/receipt family (docs/architecture.md "Layers"). Modules of
 * src/ import the file they need directly, so a command loads only what it uses; this list is the
 * family's surface at a glance and what a consumer outside src/ imports.
 */
export {
  RECEIPT_BUNDLE_LIMITS,
  RECEIPT_BUNDLE_MAGIC,
  RECEIPT_BUNDLE_MANIFEST_SCHEMA,
  RECEIPT_BUNDLE_VERSION,
  bundleManifestToJson,
  decodeBundleManifest,
  decodeReceiptBundle,
  encodeBundleManifest,
  encodeReceiptBundle,
} from './bundle.js';
export type {
  BundleRegistration,
  BundleTransfer,
  ReceiptBundleErrorCode,
  ReceiptBundleManifest,
  ReceiptBundleParts,
} from './bundle.js';
export {
  COLLECTOR_ROW_FIELDS,
  MAX_RECEIPT_BYTES,
  MAX_RECEIPT_TASKS,
  RECEIPT_STATES,
  RECEIPT_TASK_OUTCOMES,
  RECEIPT_V2_SCHEMA,
  RECEIPT_VERSION,
  checkReceipt,
  decodeReceiptV2,
  encodeReceiptV2,
  receiptOutcomeOf,
  receiptTaskKind,
  receiptV2Digest,
  receiptV2ToJson,
  validateReceiptV2,
} from './receipt-v2.js';
export type {
  ReceiptCollectorEvidence,
  ReceiptState,
  ReceiptSubject,
  ReceiptTask,
  ReceiptTaskOutcome,
  WorkflowReceiptV2,
} from './receipt-v2.js';
