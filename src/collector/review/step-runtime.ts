/**
 * The review step runtime the skill-workflow commands wire into the runner (docs/review.md
 * "Review steps in runs"): the finite controller over the operator's Claude Code transport,
 * its journal in the collector state directory (outside every workspace and the data
 * directory), and the exact native revision as the sources. The transport is built, and its
 * executable hashed, on the first review step; a run that reaches none never touches it.
 */
import { join } from 'node:path';

import { reviewRecordDigest } from '../../contracts/review/record.js';
import type { ReviewStepRequest, ReviewStepResult, ReviewStepRuntime } from '../../workflows/review-step.js';
import { openCollectState } from '../collect-state.js';
import { createClaudeCodeTransport, pickEnvironment } from './claude-code-transport.js';
import { runReview, type ReviewTransport } from './controller.js';
import { openReviewJournal, type ReviewJournal } from './journal.js';
import { revisionReviewSources } from './sources.js';

export interface ReviewRuntimeOptions {
  /** Absolute path of the Claude Code executable (hashed before and after every dispatch). */
  readonly executable: string;
  readonly model: string;
  readonly providerScope: string;
  /** The collector state directory holding review/journal.sqlite and review/work. */
  readonly stateDir: string;
  /** Names of the variables copied from this process's environment (nothing else is passed). */
  readonly envNames: readonly string[];
}

export interface ReviewStepRuntimeHandle extends ReviewStepRuntime {
  close(): void;
}

/** A review runtime connected on first use. */
export function createLazyReviewStepRuntime(options: ReviewRuntimeOptions): ReviewStepRuntimeHandle {
  let journal: ReviewJournal | null = null;
  let transport: ReviewTransport | null = null;
  return {
    async run(request: ReviewStepRequest): Promise<ReviewStepResult> {
      if (transport === null || journal === null) {
        const state = openCollectState(options.stateDir, request.store);
        transport = createClaudeCodeTransport({
          executable: options.executable,
          workDir: join(state.root, 'review', 'work'),
          env: pickEnvironment(options.envNames),
          model: options.model,
          providerScope: options.providerScope,
        });
        journal = openReviewJournal(state.root);
      }
      const auth = request.store.authority();
      const record = await runReview(
        {
          repository: request.repository,
          revision: request.revision,
          action: request.action,
          policyBytes: request.policyBytes,
        },
        { sources: revisionReviewSources(auth, request.repository, request.revision), transport, journal },
      );
      return {
        reviewId: record.review_id,
        recordDigest: reviewRecordDigest(record),
        outcome: record.outcome,
        reasons: record.reasons,
        calls: record.calls.length,
        findings: record.findings.map((f) => ({
          criterion: f.criterion,
          path: f.path,
          line: f.line,
          severity: f.severity,
          message: f.message,
        })),
      };
    },
    close(): void {
      journal?.close();
      journal = null;
    },
  };
}
