/**
 * Domain-separated digests (docs/wire.md): SHA-256(domain ‖ 0x00 ‖ u64be(len(bytes)) ‖ bytes),
 * written as 64 lowercase hex. One domain string per kind, listed here and nowhere else.
 */
import { sha256Hex } from '../crypto/sha256.js';
import { encodeCanonical } from './json/canonical-json.js';
import type { JsonValue } from './json/json-value.js';

export const DOMAINS = {
  observation: 'agentscm.agent-workflow-observation.v1',
  task: 'agentscm.agent-workflow-task.v1',
  attempt: 'agentscm.agent-workflow-attempt.v1',
  result: 'agentscm.agent-workflow-result.v1',
  collectorTransfer: 'agentscm.collector-transfer.v1',
  collectorProfile: 'agentscm.collector-profile.v1',
  receipt: 'agentscm.workflow-receipt.v2',
  revision: 'agentscm.revision.v2',
  tree: 'agentscm.tree.v1',
  reviewContext: 'agentscm.review-context.v1',
  plan: 'agentscm.skill-workflow-plan.v1',
  review: 'agentscm.review.v1',
  reviewRequest: 'agentscm.review-request.v1',
  reviewTicket: 'agentscm.review-ticket.v1',
  reviewRecord: 'agentscm.review-record.v1',
} as const;

export type Domain = (typeof DOMAINS)[keyof typeof DOMAINS] | `agentscm.agent-workflow-mutation.v1.${string}`;

/** Domain of a mutation request digest, one per action (heartbeat, cancel, reconcile, claim). */
export function mutationDomain(action: string): Domain {
  return `agentscm.agent-workflow-mutation.v1.${action}`;
}

/**
 * SHA-256 over domain ‖ NUL ‖ u64be(length) ‖ bytes, as lowercase hex. The message is written
 * into one buffer and hashed in one call: the documents digested on every task transition are
 * small (at most a few hundred KiB), and one copy costs less than a Hash object and three updates.
 */
export function domainDigest(domain: Domain, bytes: Uint8Array): string {
  const message = Buffer.allocUnsafe(domain.length + 9 + bytes.byteLength);
  const end = message.write(domain, 0, 'ascii');
  message[end] = 0;
  message.writeBigUInt64BE(BigInt(bytes.byteLength), end + 1);
  message.set(bytes, end + 9);
  return sha256Hex(message);
}

/** Domain digest of the canonical encoding of a value. */
export function digestCanonical(domain: Domain, value: JsonValue): string {
  return domainDigest(domain, encodeCanonical(value));
}

/** A value's canonical bytes and their domain digest. Callers must not modify the bytes. */
export interface CanonicalEncoding {
  readonly canonical: Buffer;
  readonly digest: string;
}

/**
 * An encoder that computes a value's canonical bytes and domain digest once per value object
 * and remembers them (WeakMap): for immutable values that several steps of one transition
 * encode or digest again (a task, an attempt).
 */
export function encodedOncePerValue<T extends object>(
  domain: Domain,
  toJson: (value: T) => JsonValue,
): (value: T) => CanonicalEncoding {
  const encodings = new WeakMap<T, CanonicalEncoding>();
  return (value: T): CanonicalEncoding => {
    let encoded = encodings.get(value);
    if (encoded === undefined) {
      const canonical = encodeCanonical(toJson(value));
      encoded = { canonical, digest: domainDigest(domain, canonical) };
      encodings.set(value, encoded);
    }
    return encoded;
  };
}
