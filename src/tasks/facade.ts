/**
 * The one typed entry of the agent-task service (docs/agent-tasks.md "One core, thin adapters": a
 * shared core for the thin service adapters). The trusted-local CLI calls it now; the hub's HTTP
 * and MCP adapters call it later with their own guard. Input bytes are decoded strictly by the
 * operation's contract decoder; the answer is a JSON value (u64 fields exact).
 */
import { AgentscmError } from '../contracts/errors.js';
import { instructionRequestDecoder } from '../contracts/instruction-entrypoint.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { referenceFetchRequestDecoder } from '../contracts/named-reference.js';
import { capabilitiesResponse } from '../contracts/task/capabilities.js';
import { recoveredRequestOf, taskRecoveryRequestDecoder } from '../contracts/task/operations.js';
import {
  subjectRequestDecoder,
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  taskStatusRequestDecoder,
} from '../contracts/task/requests.js';
import { taskResultAssertionDecoder } from '../contracts/task/result.js';
import type { StoreMode } from '../native/store-handle.js';
import { qualificationOperation } from './admission/qualification.js';
import {
  collectorClaimOperation,
  collectorClaimRequestDecoder,
  collectorDescriptorOperation,
  collectorDescriptorRequestDecoder,
} from './collector/claim.js';
import { collectorFinalizeOperation, collectorFinalizeRequestDecoder } from './collector/receipts.js';
import type { TaskContext, TaskOperation } from './context.js';
import { claimOperation } from './operations/claim.js';
import { mutationOperation } from './operations/mutation.js';
import { nextOperation, requirementsOperation } from './operations/reads.js';
import { instructionsOperation, referenceOperation } from './operations/references.js';
import { resultOperation } from './operations/result.js';
import { statusOperation } from './operations/status.js';
import { subjectOperation } from './operations/subject.js';
import { recoveryOperation } from './recovery.js';

/**
 * The operations served beside the phase-two ones: the collector operations (docs/agent-tasks.md
 * "Collector claims"; their request decoders are exported for the hub's registry), the
 * read-only qualification (docs/qualification.md) and subject (docs/hub.md "MCP").
 */
export const COLLECTOR_TASK_OPERATIONS: readonly TaskOperation[] = [
  'collector_claim',
  'collector_descriptor',
  'collector_finalize',
  'qualification',
  'subject',
];
export {
  collectorClaimRequestDecoder,
  collectorDescriptorRequestDecoder,
  collectorFinalizeRequestDecoder,
  subjectRequestDecoder,
};

/**
 * Every operation the facade serves, in one place (docs/agent-tasks.md "One core, thin adapters":
 * `capabilities` reports the operation names): isTaskOperation and the capabilities answer both read it. Keyed
 * by TaskOperation, so an operation added to that type does not compile until it is listed here;
 * collector_upload is the upload route's, not an operation of this entry.
 */
const SERVED: Record<Exclude<TaskOperation, 'collector_upload'>, true> = {
  cancel: true,
  capabilities: true,
  claim: true,
  collector_claim: true,
  collector_descriptor: true,
  collector_finalize: true,
  heartbeat: true,
  instructions: true,
  next: true,
  qualification: true,
  reconcile: true,
  recovery: true,
  reference: true,
  requirements: true,
  result: true,
  status: true,
  subject: true,
};

/** The facade's operations, sorted: what the capabilities answer lists. */
export const FACADE_OPERATIONS: readonly string[] = Object.keys(SERVED).sort();

/** Operations that take no input document. */
const NO_INPUT: readonly TaskOperation[] = ['capabilities', 'requirements', 'next', 'qualification'];

/** Operations that write the journal: a command opens its Store for writing for these only. */
const WRITES: readonly TaskOperation[] = [
  'claim',
  'heartbeat',
  'cancel',
  'reconcile',
  'result',
  'collector_claim',
  'collector_finalize',
];

/** The mode a command opens its Store in for `operation` (an unknown one reads: it is refused first). */
export function taskStoreMode(operation: string): StoreMode {
  return WRITES.includes(operation as TaskOperation) ? 'write' : 'read';
}

/** Whether `name` is one of the facade's operations. */
export function isTaskOperation(name: string): name is TaskOperation {
  return FACADE_OPERATIONS.includes(name);
}

function requireInput(operation: TaskOperation, input: Uint8Array | null): Uint8Array {
  if (input === null) {
    throw new AgentscmError('USAGE', `operation ${operation} needs an input document`, {
      hint: 'pass --input FILE or --input - with the request JSON',
    });
  }
  return input;
}

/** An operation whose input document was decoded and checked; `run` performs it for a context. */
export interface DecodedTaskCall {
  readonly operation: TaskOperation;
  run(ctx: TaskContext): JsonValue;
}

/**
 * Decode an operation's input strictly, before anything is authorized or read: an unknown
 * operation, a missing or unexpected document and every decoding error are refused here, with
 * nothing opened. The heartbeat, cancel and reconcile operations take a TaskMutationRequest
 * whose action must name the same operation.
 */
export function decodeTaskCall(operation: string, input: Uint8Array | null): DecodedTaskCall {
  if (!isTaskOperation(operation)) {
    throw new AgentscmError(
      'TASK_OPERATION_UNKNOWN',
      `unknown agent-task operation ${JSON.stringify(operation.slice(0, 64))}`,
      {
        hint: `use one of: ${FACADE_OPERATIONS.join(', ')}`,
      },
    );
  }
  if (NO_INPUT.includes(operation) && input !== null) {
    throw new AgentscmError('USAGE', `operation ${operation} takes no input document`, {
      hint: 'call it without --input',
    });
  }
  const call = (run: (ctx: TaskContext) => JsonValue): DecodedTaskCall => ({ operation, run });
  switch (operation) {
    case 'capabilities':
      return call((ctx) =>
        ctx.guard(ctx.actor, 'capabilities', () => capabilitiesResponse(FACADE_OPERATIONS) as unknown as JsonValue),
      );
    case 'requirements':
      return call((ctx) => requirementsOperation(ctx));
    case 'next':
      return call((ctx) => nextOperation(ctx));
    case 'qualification':
      return call((ctx) => qualificationOperation(ctx));
    case 'instructions': {
      const request = instructionRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => instructionsOperation(ctx, request) as JsonValue);
    }
    case 'reference': {
      const request = referenceFetchRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => referenceOperation(ctx, request) as JsonValue);
    }
    case 'claim': {
      const request = taskClaimRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => claimOperation(ctx, request));
    }
    case 'heartbeat':
    case 'cancel':
    case 'reconcile': {
      const request = taskMutationRequestDecoder.decode(requireInput(operation, input));
      if (request.action !== operation) {
        throw new AgentscmError(
          'TASK_BINDING_MISMATCH',
          `the request's action is ${request.action}, but the operation called is ${operation}`,
          { hint: 'call the operation the request names' },
        );
      }
      return call((ctx) => mutationOperation(ctx, request));
    }
    case 'result': {
      const assertion = taskResultAssertionDecoder.decode(requireInput(operation, input));
      return call((ctx) => resultOperation(ctx, assertion));
    }
    case 'status': {
      const request = taskStatusRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => statusOperation(ctx, request));
    }
    case 'collector_claim': {
      const request = collectorClaimRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => collectorClaimOperation(ctx, request));
    }
    case 'collector_descriptor': {
      const request = collectorDescriptorRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => collectorDescriptorOperation(ctx, request));
    }
    case 'collector_finalize': {
      const request = collectorFinalizeRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => collectorFinalizeOperation(ctx, request));
    }
    case 'subject': {
      const request = subjectRequestDecoder.decode(requireInput(operation, input));
      return call((ctx) => subjectOperation(ctx, request));
    }
    case 'collector_upload':
      throw new AgentscmError('TASK_OPERATION_UNKNOWN', 'collector uploads are not a facade operation', {
        hint: 'upload with `agentscm agent-task upload` (importCollectorTransfer)',
      });
    case 'recovery': {
      const recovered = recoveredRequestOf(taskRecoveryRequestDecoder.decode(requireInput(operation, input)));
      return call((ctx) => recoveryOperation(ctx, recovered));
    }
  }
}

/** Run one operation for `ctx.actor` (docs/agent-tasks.md "State machine"): decode, then run. */
export function callTaskOperation(ctx: TaskContext, operation: string, input: Uint8Array | null): JsonValue {
  return decodeTaskCall(operation, input).run(ctx);
}
