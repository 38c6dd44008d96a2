/**
 * Parse once, then verify (docs/collector-transfer.md "Import"). An uploaded envelope is read
 * exactly once per upload — size, magic, header, exact framing and every record digest — and its
 * signature is checked exactly once, with the key of the registration its header names, then
 * its audience against this authority. Every later step of the import (the review replay, the
 * header bindings, the stored bytes) works on the VerifiedTransfer this returns, never on the
 * bytes again.
 */
import {
  checkTransferSignature,
  readTransferEnvelope,
  transferDigest,
  transferKindOf,
  type TransferEnvelope,
  type TransferKind,
} from '../../contracts/collector/transfer.js';
import { AgentscmError } from '../../contracts/errors.js';
import { hexToBytes } from '../../contracts/task/common.js';
import { authorityId } from '../../native/authority-identity.js';
import { getRegistration } from '../../native/executor-registry.js';
import type { Authority } from '../../native/store.js';

/** An envelope read and verified once; only readVerifiedTransfer makes one. */
export interface VerifiedTransfer {
  /** The original signed bytes, stored as they are. */
  readonly bytes: Uint8Array;
  readonly envelope: TransferEnvelope;
  /** SHA-256 of the whole envelope (the transfer digest). */
  readonly digest: string;
  /** `review` when the records are review records, else `command`. */
  readonly kind: TransferKind;
  /** The key the signature verified under (the header's executor names it). */
  readonly verificationKeyId: string;
  /**
   * Whether the registration the header names is still current: only an exact retry of an
   * already imported transfer is answered under one that is not (its historical view).
   */
  readonly registrationCurrent: boolean;
}

/**
 * How many envelopes readVerifiedTransfer and reverifyRetainedEnvelope have parsed and how many
 * signatures they have checked in this process. Read only by tests
 * (test/evidence/parse-once.test.ts), which count the calls of one upload, its receipt included;
 * nothing in the product reads or resets it.
 */
export const verifiedTransferCounts = { parsed: 0, signaturesChecked: 0 };

const made = new WeakSet<VerifiedTransfer>();

/** Whether `value` came from readVerifiedTransfer (a hand-built object is not verified). */
export function isVerifiedTransfer(value: unknown): value is VerifiedTransfer {
  return typeof value === 'object' && value !== null && made.has(value as VerifiedTransfer);
}

/**
 * Read `bytes` as a transfer envelope (pure, before the authority is opened: a malformed envelope
 * is refused with its TRANSFER_* code whatever the store), then, through `withAuthority`, the
 * signature with the key of the registration the header names and the audience
 * (IMPORT_AUDIENCE_MISMATCH). The order is the spec's: envelope checks before anything else.
 */
export function readVerifiedTransfer(
  bytes: Uint8Array,
  withAuthority: <T>(body: (auth: Authority) => T) => T,
): VerifiedTransfer {
  verifiedTransferCounts.parsed += 1;
  const envelope = readTransferEnvelope(bytes);
  const digest = transferDigest(bytes);
  const { verificationKeyId, registrationCurrent } = withAuthority((auth) => {
    const registration = getRegistration(auth, envelope.header.executor.registration_id);
    verifiedTransferCounts.signaturesChecked += 1;
    const keyId = checkTransferSignature(envelope, hexToBytes(registration.public_key));
    const audience = authorityId(auth);
    if (envelope.header.audience !== audience) {
      throw new AgentscmError(
        'IMPORT_AUDIENCE_MISMATCH',
        `the transfer is addressed to authority ${envelope.header.audience}, not this one (${audience})`,
        {
          hint: 'upload it to the authority that issued its descriptor',
          details: { audience: envelope.header.audience },
        },
      );
    }
    return { verificationKeyId: keyId, registrationCurrent: registration.current };
  });
  const transfer: VerifiedTransfer = Object.freeze({
    bytes,
    envelope,
    digest,
    kind: transferKindOf(envelope.header.records) === 'review' ? 'review' : 'command',
    verificationKeyId,
    registrationCurrent,
  });
  made.add(transfer);
  return transfer;
}

/**
 * Read retained bytes again and check their signature under `publicKey` (the registration's key
 * now). Only the receipt built from retained transfers calls it — `collector_finalize` and
 * admission's rebuild — never an upload: that re-verification is by design, since the stored
 * bytes are checked for integrity under the registration as it is now, in a later transaction
 * than the import that verified them. Counted with readVerifiedTransfer's counters.
 */
export function reverifyRetainedEnvelope(bytes: Uint8Array, publicKey: Uint8Array): TransferEnvelope {
  verifiedTransferCounts.parsed += 1;
  const envelope = readTransferEnvelope(bytes);
  verifiedTransferCounts.signaturesChecked += 1;
  checkTransferSignature(envelope, publicKey);
  return envelope;
}
