/**
 * doctor (src/doctor/).
 * The rows of docs/errors.md "doctor".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const DOCTOR_ERRORS = {
  title: 'doctor',
  codes: {
    DOCTOR_FAILED: {
      exit: EXIT.FAILED,
      summary:
        'agentscm doctor found at least one failing check; its findings (each with a code and a fix, ' +
        'docs/doctor.md) are the answer, on stdout.',
    },
  },
} as const satisfies ErrorSection;
