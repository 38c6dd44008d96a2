/**
 * Domain-separated digests (WIRE.md): SHA-256(domain ‖ 0x00 ‖ u64be(len(bytes)) ‖ bytes),
 * written as 64 lowercase hex. One domain string per kind, listed here and nowhere else.
 */
import { createSha256 } from '../crypto/sha256.js';
import { encodeCanonical } from './canonical-json.js';
import type { JsonValue } from './json-value.js';

export const DOMAINS = {
  observation: 'agentscm.agent-workflow-observation.v1',
  task: 'agentscm.agent-workflow-task.v1',
  attempt: 'agentscm.agent-workflow-attempt.v1',
  result: 'agentscm.agent-workflow-result.v1',
  collectorTransfer: 'agentscm.collector-transfer.v1',
  receipt: 'agentscm.workflow-receipt.v2',
  revision: 'agentscm.revision.v1',
  reviewContext: 'agentscm.review-context.v1',
  plan: 'agentscm.skill-workflow-plan.v1',
} as const;

export type Domain = (typeof DOMAINS)[keyof typeof DOMAINS] | `agentscm.agent-workflow-mutation.v1.${string}`;

/** Domain of a mutation request digest, one per action (heartbeat, cancel, reconcile, claim). */
export function mutationDomain(action: string): Domain {
  return `agentscm.agent-workflow-mutation.v1.${action}`;
}

/** SHA-256 over domain ‖ NUL ‖ u64be(length) ‖ bytes, as lowercase hex. */
export function domainDigest(domain: Domain, bytes: Uint8Array): string {
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(bytes.byteLength));
  return createSha256().update(domain, 'ascii').update(Buffer.from([0])).update(length).update(bytes).digest('hex');
}

/** Domain digest of the canonical encoding of a value. */
export function digestCanonical(domain: Domain, value: JsonValue): string {
  return domainDigest(domain, encodeCanonical(value));
}
