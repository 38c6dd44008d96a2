/**
 * The coded errors of the workflow runner: a changed binding, a missing runtime, a run-ID
 * conflict and a run that already ended.
 */
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';

export function bindingChanged(runId: string, cause: AgentscmError): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_BINDING_CHANGED',
    `run "${runId}" cannot continue: its binding changed — [${cause.code}] ${cause.message}`,
    {
      hint:
        'recorded observations are kept; start a new run with a definition bound to the current revision ' +
        'and policy epoch',
      details: { run_id: runId, cause_code: cause.code },
      cause,
    },
  );
}

/** The cause of a binding change when the repository's policy epoch moved after the run was bound. */
export function policyStale(repository: string, epoch: bigint, bound: bigint): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_POLICY_STALE',
    `repository ${repository} moved to policy epoch ${epoch}; the run is bound to ${bound}`,
  );
}

/** Whether a failed (re)compilation means the binding changed, not that the store could not be read. */
export function isBindingFailure(error: unknown): error is AgentscmError {
  return (
    isAgentscmError(error) && error.code !== 'STORE_BUSY' && error.code !== 'IO_ERROR' && error.code !== 'INTERNAL'
  );
}

export function runtimeNotConfigured(stepId: string): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED',
    `command runtime not configured: step "${stepId}" is a command step and no container runtime was given`,
    {
      hint: 'pass both --docker PATH and --docker-socket PATH; nothing was recorded as run for this step',
      details: { step: stepId },
    },
  );
}

export function reviewRuntimeNotConfigured(stepId: string): AgentscmError {
  return new AgentscmError(
    'REVIEW_RUNTIME_NOT_CONFIGURED',
    `review transport not configured: step "${stepId}" is a review step and no review transport was given`,
    {
      hint:
        'pass --review-executable PATH --review-model NAME --review-provider-scope ID --review-state-dir DIR ' +
        '(and --review-env NAME for each variable the executable needs); nothing was recorded as run for this step',
      details: { step: stepId },
    },
  );
}

export function runConflict(runId: string, retained: string, offered: string): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_RUN_CONFLICT',
    `run "${runId}" is bound to plan ${retained}; this definition compiles to plan ${offered}`,
    {
      hint: 'use a new run ID for a different workflow, or the original definition to reopen this run',
      details: { run_id: runId, retained_plan: retained, offered_plan: offered },
    },
  );
}

export function runTerminal(runId: string, state: string): AgentscmError {
  return new AgentscmError(
    'WORKFLOW_RUN_TERMINAL',
    `run "${runId}" already ended as ${state}; cancellation applies only to a running run`,
    {
      hint: 'inspect it with `agentscm skill-workflow status RUN_ID`',
      details: { run_id: runId, state },
    },
  );
}
