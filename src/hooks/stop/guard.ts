/**
 * The frame every Stop hook runs in (docs/stop-hooks.md: the Stop hooks share the payload decoding,
 * the 8-continuation counter and the output shapes): decode the payload, consult the counter, run
 * the hook's work only when continuation may go on, count a block or forget the count on a pass,
 * and render the decision for the client. Malformed stdin and counter errors exit 1, which both
 * clients treat as a non-blocking error; an exhausted counter passes without running the work.
 */
import { isAgentscmError } from '../../contracts/errors.js';
import { oneLine } from '../../contracts/message-text.js';
import type { Store } from '../../native/store-handle.js';
import {
  clearStopCounter,
  countStopBlock,
  MAX_STOP_CONTINUATIONS,
  readStopCounter,
  type StopCounter,
} from './counter.js';
import { renderStopOutput, type StopDecision } from './output.js';
import { decodeStopPayload, type StopClient, type StopPayload } from './payload.js';

export interface StopHookResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: 0 | 1;
}

export interface StopGuardInput {
  readonly client: StopClient;
  /** The command's Store: only its data directory is used, for the counter file (no database is opened). */
  readonly store: Pick<Store, 'dataDir'>;
  readonly change: string;
  readonly payload: Uint8Array;
  /** The hook's own work: pass or block. Called only when continuation may go on. */
  readonly work: (payload: StopPayload) => Promise<StopDecision>;
}

function failed(error: unknown): StopHookResult {
  const line = isAgentscmError(error)
    ? `error[${error.code}]: ${oneLine(error.message)}${error.hint === undefined ? '' : `; ${oneLine(error.hint)}`}`
    : `error[INTERNAL]: ${oneLine(error instanceof Error ? error.message : String(error))}`;
  return { stdout: '', stderr: `${line}\n`, exitCode: 1 };
}

/** Run one Stop hook invocation (see the module comment). */
export async function guardStop(input: StopGuardInput): Promise<StopHookResult> {
  let payload: StopPayload;
  let counter: StopCounter;
  try {
    payload = decodeStopPayload(input.client, input.payload);
    counter = readStopCounter(input.store, payload, input.change);
    if (counter.exhausted) {
      clearStopCounter(counter);
      const out = renderStopOutput(input.client, { decision: 'pass' });
      return {
        stdout: out.stdout,
        stderr:
          `agentscm: the Stop hook blocked ${MAX_STOP_CONTINUATIONS} times in a row; continuation ends here ` +
          'without running it again\n',
        exitCode: 0,
      };
    }
  } catch (error) {
    return failed(error);
  }
  try {
    const decision = await input.work(payload);
    if (decision.decision === 'block') countStopBlock(counter);
    else clearStopCounter(counter);
    const out = renderStopOutput(input.client, decision);
    return { stdout: out.stdout, stderr: '', exitCode: out.exitCode };
  } catch (error) {
    return failed(error);
  }
}
