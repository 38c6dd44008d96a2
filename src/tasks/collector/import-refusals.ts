/**
 * The refusals every import path shares (docs/errors.md "collector import"): a stable code, a
 * message naming the binding and a hint; none changes anything.
 */
import type { TransferHeader } from '../../contracts/collector/transfer.js';
import { AgentscmError, type ErrorCode } from '../../contracts/errors.js';

export function refuse(code: ErrorCode, message: string, hint: string, details: Record<string, unknown> = {}): never {
  throw new AgentscmError(code, message, { hint, details });
}

export function uploadUnknown(header: TransferHeader): AgentscmError {
  return new AgentscmError(
    'IMPORT_UPLOAD_UNKNOWN',
    `upload request ${header.upload_request_id} names no collector claim of this authority`,
    {
      hint: 'upload only the envelope collected for a descriptor of this authority (agent-task claim --profile)',
      details: { upload_request_id: header.upload_request_id },
    },
  );
}

export function registrationNotCurrent(registrationId: string): AgentscmError {
  return new AgentscmError(
    'IMPORT_REGISTRATION_NOT_CURRENT',
    `executor registration ${registrationId} is revoked or superseded by a newer epoch`,
    {
      hint: 'enroll again, install a profile for the new epoch, claim and collect again',
      details: { registration_id: registrationId },
    },
  );
}
