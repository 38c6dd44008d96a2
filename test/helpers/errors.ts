/** The error code a call throws ('ok' when it returns); anything but an AgentscmError is rethrown. */
import { AgentscmError } from '../../src/contracts/errors.js';

export function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentscmError) return error.code;
    throw error;
  }
  return 'ok';
}
