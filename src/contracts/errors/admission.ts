/**
 * Admission: approval and landing (src/tasks/admission/).
 * The rows of docs/errors.md "admission (approval and landing)".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const ADMISSION_ERRORS = {
  title: 'admission (approval and landing)',
  codes: {
    ADMISSION_SUBJECT_STALE: {
      exit: EXIT.CONFLICT,
      summary:
        'The subject to approve or land is no longer current (a newer Change version, another policy epoch, ' +
        'context or target requirement), or the newest approval names an older version; nothing was approved or ' +
        'landed.',
    },
    ADMISSION_NOT_QUALIFIED: {
      exit: EXIT.FAILED,
      summary:
        'The current subject does not qualify (the message names the qualification failure codes and the next ' +
        'step); nothing was approved or landed.',
    },
    ADMISSION_AUTHORIZATION_CHANGED: {
      exit: EXIT.FAILED,
      summary:
        'The origin grant or the executor registration of an imported task no longer passes the live checks ' +
        '(revoked, rotated, re-enrolled) since its receipt; nothing was approved or landed.',
    },
    ADMISSION_PROFILE_CHANGED: {
      exit: EXIT.FAILED,
      summary:
        "An imported task's collector profile is no longer the current profile of its step (a newer profile was " +
        'installed, or its registration is not current); nothing was approved or landed.',
    },
    ADMISSION_COMMAND_REQUIRED: {
      exit: EXIT.FAILED,
      summary:
        "A command step bound to the subject's command/v1 context has no exact successful command (native or " +
        'imported), optional or not; nothing was approved or landed.',
    },
    APPROVAL_NOT_FOUND: {
      exit: EXIT.FAILED,
      summary: 'No approval binds the exact current subject and the receipt that qualifies it now; nothing was landed.',
    },
    LAND_BASE_MISMATCH: {
      exit: EXIT.CONFLICT,
      summary:
        "The target's current revision is not the base the Change's revision descends from (another landing " +
        'moved it), or the target already is at that revision; nothing was landed.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface AdmissionErrorDetails {
  ADMISSION_AUTHORIZATION_CHANGED: { failures: Readonly<Record<string, unknown>>[] };
  ADMISSION_COMMAND_REQUIRED: { task_id: string; step_id: string };
  ADMISSION_NOT_QUALIFIED: { failures: Readonly<Record<string, unknown>>[]; next: Readonly<Record<string, unknown>> };
  ADMISSION_PROFILE_CHANGED: { task_id: string };
  LAND_BASE_MISMATCH: { target_revision: string };
}
