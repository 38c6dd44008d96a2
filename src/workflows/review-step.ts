/**
 * The seam between the workflow runner and the finite review controller (docs/review.md
 * "Review steps in runs"). The runner is a lower layer than src/collector, so it only knows
 * this interface; the command files wire the controller and the operator's transport in.
 * The request carries the caller's open Store.
 */
import type { ReviewAction } from '../contracts/review/policy.js';
import type { Store } from '../native/store-handle.js';

/** One review step, bound by the compiled plan, handed to the review runtime. */
export interface ReviewStepRequest {
  readonly store: Store;
  readonly runId: string;
  readonly stepId: string;
  readonly repository: string;
  readonly revision: string;
  readonly action: ReviewAction;
  /** The policy resource's exact bytes, already checked against the plan's SHA-256. */
  readonly policyBytes: Uint8Array;
  /** SIGINT/SIGTERM of the controller: no further call is started. */
  readonly signal: AbortSignal;
}

/** One finding of a review, as the step result retains it (bounded by the runner). */
export interface ReviewStepFinding {
  readonly criterion: string;
  readonly path: string;
  readonly line: number | null;
  readonly severity: string;
  readonly message: string;
}

/** What the review ended as: only a `passed` record makes the step succeed. */
export interface ReviewStepResult {
  readonly reviewId: string;
  readonly recordDigest: string;
  readonly outcome: 'passed' | 'failed' | 'incomplete' | 'uncertain';
  readonly reasons: readonly string[];
  readonly calls: number;
  readonly findings: readonly ReviewStepFinding[];
}

export interface ReviewStepRuntime {
  /** Run (or reopen from its journal) the review; a retained call is never made again. */
  run(request: ReviewStepRequest): Promise<ReviewStepResult>;
}
