/**
 * The finite review controller (docs/review.md "How the controller works"; the collector runs it,
 * and import runs it again against a validation-only replay transport and journal:
 * docs/collector-transfer.md "Import"). Deterministic, so that it can be replayed:
 * - the requests are a pure function of the exact revision's bytes, the policy, the action and
 *   the pinned transport identity: excerpts of at most the policy's bounds, packed in coverage
 *   order, one canonical request per model call;
 * - each call is reserved in the journal (request bytes, digest, ticket) before it is made and
 *   its observation is retained; a reservation without an observation is never called again and
 *   makes the record uncertain;
 * - coverage, findings and outcome are derived by the controller alone from the retained
 *   observations: model output is data, it cannot select a path outside its own request, extend
 *   a budget or run anything;
 * - a budget that would be exceeded stops the review (no truncation): the record is not passing.
 */
import { digestCanonical, DOMAINS } from '../../contracts/digest.js';
import { AgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import {
  checkCoverageWithinPolicy,
  checkReviewAction,
  decodeReviewPolicy,
  REVIEW_LIMITS,
  reviewActionToJson,
  reviewPolicyDigest,
  type ReviewAction,
  type ReviewBudgets,
} from '../../contracts/review/policy.js';
import {
  decodeReviewObservation,
  observationToJson,
  REVIEW_REASONS,
  type CallEffect,
  type ReviewCallObservation,
  type ReviewCallRecord,
  type ReviewCoverage,
  type ReviewReason,
  type ReviewRecord,
  type ReviewRecordFinding,
} from '../../contracts/review/record.js';
import {
  decodeReviewResponse,
  MAX_REVIEW_REQUEST_BYTES,
  REVIEW_RESPONSE_FORMAT,
  reviewRequestDigest,
  reviewRequestToJson,
  reviewTicket,
  transportIdentityToJson,
  validateTransportIdentity,
  type ReviewRequest,
  type ReviewResponse,
  type ReviewTransportIdentity,
} from '../../contracts/review/request.js';
import { getJournalCall, recordJournalObservation, reserveJournalCall, type ReviewJournal } from './journal.js';
import { packCalls, planSources, type ReviewSources } from './sources.js';

/** One call handed to a transport: the exact canonical request and its bounds. */
export interface ReviewDispatch {
  readonly callIndex: number;
  /** The canonical request bytes: what the model is sent. */
  readonly request: Buffer;
  readonly requestDigest: string;
  readonly ticket: string;
  /** The largest answer the call may return (the remaining output budget, at most one response). */
  readonly maxResponseBytes: number;
  /** The longest the call may take (the policy's call timeout, at most the remaining wall time). */
  readonly timeoutMs: number;
}

/** A model transport: answers one canonical request at a time with a retained observation. */
export interface ReviewTransport {
  readonly identity: ReviewTransportIdentity;
  dispatch(call: ReviewDispatch): Promise<ReviewCallObservation>;
}

export interface ReviewInput {
  readonly repository: string;
  readonly revision: string;
  readonly action: ReviewAction;
  /** The policy resource's exact bytes (its SHA-256 is the policy identity). */
  readonly policyBytes: Uint8Array;
}

/** What a run of the controller needs besides its input. */
export interface ReviewRun {
  readonly sources: ReviewSources;
  readonly transport: ReviewTransport;
  readonly journal: ReviewJournal;
}

/** The observation of a reservation found without one: the call may have reached the model. */
export const REOPENED_UNCERTAIN: ReviewCallObservation = {
  status: 'uncertain',
  response: null,
  response_sha256: null,
  response_bytes: 0,
  exit_code: null,
  elapsed_ms: 0,
  executable_before: null,
  executable_after: null,
  detail: 'reserved before a model call that retains no observation; it is never made again',
};

/** The review's identity: its revision, policy, action and pinned transport (domain agentscm.review.v1). */
export function reviewIdOf(input: ReviewInput, policySha256: string, identity: ReviewTransportIdentity): string {
  return digestCanonical(DOMAINS.review, {
    version: 1,
    repository: input.repository,
    revision: input.revision,
    policy_sha256: policySha256,
    action: reviewActionToJson(input.action),
    transport: transportIdentityToJson(identity),
  });
}

interface CallJudgement {
  readonly effect: CallEffect;
  readonly response: ReviewResponse | null;
}

/**
 * What the controller makes of one answer: only paths of this request, only its criteria, one verdict each in order.
 */
function judge(observation: ReviewCallObservation, request: ReviewRequest, maxResponseBytes: number): CallJudgement {
  if (observation.status !== 'answered' || observation.response === null)
    return { effect: 'not_answered', response: null };
  let response: ReviewResponse;
  try {
    response = decodeReviewResponse(Buffer.from(observation.response, 'utf8'), maxResponseBytes);
  } catch (error) {
    if (error instanceof AgentscmError) return { effect: 'response_invalid', response: null };
    throw error;
  }
  const criteria = request.criteria.map((c) => c.criterion);
  if (response.verdicts.length !== criteria.length || response.verdicts.some((v, i) => v.criterion !== criteria[i]))
    return { effect: 'response_invalid', response: null };
  const exposed = new Set(request.excerpts.map((e) => e.path));
  const known = new Set(criteria);
  for (const finding of response.findings) {
    if (!exposed.has(finding.path)) return { effect: 'out_of_policy', response: null };
    if (!known.has(finding.criterion)) return { effect: 'response_invalid', response: null };
  }
  return { effect: 'accepted', response };
}

const STOPPING: Partial<Record<ReviewCallObservation['status'], ReviewReason>> = {
  timed_out: 'timed_out',
  output_limit: 'budget_exhausted',
  executable_changed: 'executable_changed',
  uncertain: 'call_uncertain',
};

function sortedReasons(reasons: Set<ReviewReason>): ReviewReason[] {
  return REVIEW_REASONS.filter((reason) => reasons.has(reason));
}

/**
 * Run (or, from retained state, re-derive) one review and return its record. The same sources,
 * policy, action, transport identity and retained observations give byte-identical requests
 * and a byte-identical record; a retained call is never made again.
 */
export async function runReview(input: ReviewInput, run: ReviewRun): Promise<ReviewRecord> {
  const action = checkReviewAction(input.action);
  const policy = decodeReviewPolicy(input.policyBytes);
  checkCoverageWithinPolicy(action, policy);
  const identity = validateTransportIdentity(run.transport.identity);
  const policySha256 = reviewPolicyDigest(input.policyBytes);
  const reviewId = reviewIdOf(input, policySha256, identity);

  const { files, excerpts } = planSources(action, policy, run.sources);
  const planned = packCalls(excerpts, policy);
  const budgets = action.budgets;
  const usage: { -readonly [K in keyof ReviewBudgets]: number } = {
    model_calls: 0,
    input_bytes: 0,
    output_bytes: 0,
    files_exposed: 0,
    wall_time_ms: 0,
  };
  const exposedFiles = new Set<string>();
  const coveredBytes = files.map(() => 0);
  const rejectedFiles = new Set<number>();
  const reasons = new Set<ReviewReason>();
  const calls: ReviewCallRecord[] = [];
  const findings: ReviewRecordFinding[] = [];
  const verdicts = new Map<string, 'pass' | 'fail'>();

  for (const [callIndex, callExcerpts] of planned.entries()) {
    const request: ReviewRequest = {
      version: 1,
      kind: 'review_request',
      review_id: reviewId,
      call_index: callIndex,
      repository: input.repository,
      revision: input.revision,
      policy_sha256: policySha256,
      transport: identity,
      instructions: policy.instructions,
      criteria: action.criteria,
      excerpts: callExcerpts.map(({ fileIndex: _fileIndex, ...excerpt }) => excerpt),
      response_format: REVIEW_RESPONSE_FORMAT,
    };
    const requestBytes = encodeCanonical(reviewRequestToJson(request));
    if (requestBytes.length > MAX_REVIEW_REQUEST_BYTES)
      throw new AgentscmError(
        'INTERNAL',
        `review request ${callIndex} has ${requestBytes.length} bytes, more than a request can hold`,
      );
    const exposed = [...new Set(callExcerpts.map((e) => e.path))];
    const newFiles = exposed.filter((path) => !exposedFiles.has(path)).length;
    const remainingOutput = Math.min(budgets.output_bytes - usage.output_bytes, REVIEW_LIMITS.maxResponseBytes);
    const remainingWall = budgets.wall_time_ms - usage.wall_time_ms;
    // Every budget is checked before the reservation: a call that cannot fit is never made.
    if (
      usage.model_calls + 1 > budgets.model_calls ||
      usage.input_bytes + requestBytes.length > budgets.input_bytes ||
      exposedFiles.size + newFiles > budgets.files_exposed ||
      remainingOutput <= 0 ||
      remainingWall <= 0
    ) {
      reasons.add('budget_exhausted');
      break;
    }
    const requestDigest = reviewRequestDigest(request);
    const ticket = reviewTicket(reviewId, callIndex, requestDigest);
    let observation: ReviewCallObservation;
    // The reservation is the only way to a call: a reservation that already exists (reopened
    // state, or another controller on the same journal) is never called again.
    if (reserveJournalCall(run.journal, reviewId, callIndex, { requestDigest, ticket, request: requestBytes })) {
      observation = await run.transport.dispatch({
        callIndex,
        request: requestBytes,
        requestDigest,
        ticket,
        maxResponseBytes: remainingOutput,
        timeoutMs: Math.min(policy.call_timeout_ms, remainingWall),
      });
      const retainedBytes = encodeCanonical(observationToJson(observation));
      // What is retained must decode as a record's observation does at import.
      decodeReviewObservation(retainedBytes);
      recordJournalObservation(run.journal, reviewId, callIndex, ticket, retainedBytes);
    } else {
      const retained = getJournalCall(run.journal, reviewId, callIndex);
      observation = retained?.observation == null ? REOPENED_UNCERTAIN : decodeReviewObservation(retained.observation);
    }

    usage.model_calls += 1;
    usage.input_bytes += requestBytes.length;
    usage.output_bytes += observation.response_bytes;
    usage.wall_time_ms += observation.elapsed_ms;
    for (const path of exposed) exposedFiles.add(path);
    usage.files_exposed = exposedFiles.size;

    const judgement = judge(observation, request, remainingOutput);
    calls.push({
      call_index: callIndex,
      request_digest: requestDigest,
      ticket,
      exposed,
      observation,
      effect: judgement.effect,
    });
    if (judgement.effect === 'accepted' && judgement.response !== null) {
      for (const excerpt of callExcerpts)
        coveredBytes[excerpt.fileIndex] = (coveredBytes[excerpt.fileIndex] ?? 0) + excerpt.length;
      for (const v of judgement.response.verdicts) {
        // One failing call fails the criterion; a pass never overrides it.
        if (v.verdict === 'fail') verdicts.set(v.criterion, 'fail');
        else if (!verdicts.has(v.criterion)) verdicts.set(v.criterion, 'pass');
      }
      for (const f of judgement.response.findings)
        findings.push({
          call_index: callIndex,
          criterion: f.criterion,
          path: f.path,
          line: f.line,
          severity: f.severity,
          message: f.message,
        });
    } else {
      for (const excerpt of callExcerpts) rejectedFiles.add(excerpt.fileIndex);
      if (judgement.effect === 'response_invalid') reasons.add('response_invalid');
      else if (judgement.effect === 'out_of_policy') reasons.add('out_of_policy');
      else if (observation.status === 'failed') reasons.add('transport_failed');
    }
    const stop = STOPPING[observation.status];
    if (stop !== undefined) {
      reasons.add(stop);
      break;
    }
  }

  const coverage: ReviewCoverage[] = files.map((file, index) => {
    const covered = coveredBytes[index] ?? 0;
    let state = file.state;
    if (
      state === 'not_covered' &&
      file.sha256 !== null &&
      !rejectedFiles.has(index) &&
      covered === file.size &&
      calls.some((c) => c.effect === 'accepted' && c.exposed.includes(file.path))
    )
      state = 'covered';
    else if (state === 'not_covered' && covered > 0) state = 'partial';
    return { path: file.path, file_sha256: file.sha256, file_bytes: file.size, covered_bytes: covered, state };
  });
  if (coverage.some((c) => c.state !== 'covered')) reasons.add('coverage_incomplete');
  const complete = !reasons.has('coverage_incomplete') && calls.every((c) => c.effect === 'accepted');
  const criteria = action.criteria.map(({ criterion }) => {
    const verdict = verdicts.get(criterion);
    const outcome: 'passed' | 'failed' | 'not_assessed' =
      verdict === 'fail' ? 'failed' : verdict === 'pass' && complete ? 'passed' : 'not_assessed';
    return { criterion, outcome };
  });
  if (criteria.some((c) => c.outcome === 'failed')) reasons.add('criterion_failed');
  const outcome =
    reasons.has('call_uncertain') || reasons.has('executable_changed')
      ? 'uncertain'
      : reasons.has('criterion_failed')
        ? 'failed'
        : reasons.size > 0
          ? 'incomplete'
          : 'passed';
  return {
    version: 1,
    kind: 'review_record',
    review_id: reviewId,
    repository: input.repository,
    revision: input.revision,
    policy_sha256: policySha256,
    action,
    transport: identity,
    calls,
    usage,
    coverage,
    criteria,
    findings,
    outcome,
    reasons: sortedReasons(reasons),
  };
}
