/**
 * The seam between the workflow runner and the command collector (docs/skill-workflows.md
 * "Command steps at run time"). The runner is a lower layer than src/collector, so it only
 * knows this interface; the command files wire the collector's implementation in. Every
 * request carries the caller's open Store: the runtime opens no database of its own.
 */
import type { Store } from '../native/store-handle.js';

/** One command step, fully bound by the compiled plan, handed to the collector runtime. */
export interface CommandStepRequest {
  readonly store: Store;
  readonly runId: string;
  readonly stepId: string;
  readonly repository: string;
  readonly revision: string;
  readonly policyEpoch: bigint;
  /** Path relative to the skill directory, as written in the definition. */
  readonly runner: string;
  /** Full native source path of the recipe resource. */
  readonly recipePath: string;
  /** SHA-256 hex of the exact recipe bytes read from the revision. */
  readonly recipeDigest: string;
  readonly change: { readonly repository: string; readonly id: string };
  readonly changeVersion: bigint;
  readonly contextDigest: string;
  /** SIGINT/SIGTERM of the controller: request collector cancellation and cleanup. */
  readonly signal: AbortSignal;
  /**
   * Recheck the step's full binding (policy epoch, Change version and revision, review context)
   * against the authority. The runtime calls it inside the transaction that reserves a new
   * attempt; when it throws (WORKFLOW_BINDING_CHANGED) nothing is reserved and nothing runs.
   */
  readonly recheckBinding?: () => void;
}

/** What a runtime checks before a run that can reach the step is created. */
export interface CommandStepPreflight {
  readonly store: Store;
  readonly stepId: string;
  readonly repository: string;
  readonly revision: string;
  readonly recipePath: string;
  readonly recipeDigest: string;
}

/** What the durable command attempt ended as; `uncertain` is never turned into success. */
export interface CommandStepResult {
  readonly state: 'succeeded' | 'failed' | 'uncertain';
  readonly attemptId: string;
  readonly generation: bigint;
  readonly outcome: string;
  readonly recordDigest: string | null;
  readonly summary: string;
}

/** Cancellation of a step whose durable attempt is still running and has no live controller. */
export interface CommandStepCancelRequest {
  readonly store: Store;
  readonly runId: string;
  readonly stepId: string;
  readonly signal: AbortSignal;
}

export interface CommandStepRuntime {
  /**
   * Optional: check, without reserving or creating anything, what the step needs from the
   * engine (the recipe image is present: IMAGE_NOT_FOUND otherwise). The runner calls it before
   * it creates a run that can reach the step.
   */
  preflight?(request: CommandStepPreflight): Promise<void>;
  /** Reserve the durable attempt, run the container, record, clean up. Never re-runs a reserved attempt. */
  run(request: CommandStepRequest): Promise<CommandStepResult>;
  /**
   * Optional: stop the running containers of the step's running attempt by custody label,
   * without finishing the attempt, while a live controller holds the run (a cancel from another
   * process). The controller sees the run cancelled and records the attempt as cancelled.
   * Returns how many containers were stopped.
   */
  stop?(request: CommandStepCancelRequest): Promise<number>;
  /**
   * Optional: stop and clean up the step's running attempt and finalize it (failed or
   * uncertain), never running it again. `skill-workflow cancel` uses it when present;
   * without it, cancel refuses while an attempt is running and points to recover.
   */
  cancel?(request: CommandStepCancelRequest): Promise<CommandStepResult>;
}
