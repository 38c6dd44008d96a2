/**
 * The dashboard's views (docs/dashboard.md "Routes and bounds"): each calls the same read core as
 * the CLI listing of the same thing (change list and show, qualification, target list,
 * registration list, receipt show and export, skill-workflow list) or a task/receipt page function
 * of src/tasks/views.ts, through the worker's Store; every list is bounded by a limit and a cursor
 * or a documented maximum. Nothing here writes. src/hub/ui-api.ts routes and authorizes.
 * Over 400 lines: one short function per dashboard view, each a thin call of its read core.
 */
import { AgentscmError, isAgentscmError } from '../contracts/errors.js';
import { encodeCanonicalText } from '../contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../contracts/json/json-value.js';
import { qualificationToJson } from '../contracts/task/qualification.js';
import { getChange, listChanges } from '../native/changes.js';
import { listCollectorProfiles } from '../native/collector-profiles.js';
import { listLandings } from '../native/landings.js';
import { listRegistrationsInStore, listTargetsInStore } from '../native/listings.js';
import { targetSubjectRecipe } from '../native/requirements.js';
import { soleCurrentContext } from '../native/review-contexts.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction } from '../native/store.js';
import { diffRevisionView, showChange, showPolicy } from '../native/views.js';
import { qualifyLocal } from '../tasks/admission/qualification-local.js';
import { buildReceiptBundle, showReceipt } from '../tasks/admission/receipt-bundle.js';
import { RECEIPT_PAGE_MAX, receiptPage, TASK_PAGE_MAX, taskPage } from '../tasks/views.js';
import { showCommandAttempt } from '../workflows/command-attempts.js';
import { journalRead, type Journal } from '../workflows/journal.js';
import { listRuns } from '../workflows/run-list.js';
import { readRunStatus } from '../workflows/status.js';
import type { HubProfile } from './config.js';

/** Default page size of the paged lists. */
export const UI_PAGE_DEFAULT = 50;
/** Most Changes per page: each carries its qualification, computed for the page only. */
export const CHANGE_PAGE_MAX = 100;
/** Most runs per page. */
export const RUN_PAGE_MAX = 200;
/** Bytes of each retained output stream (stdout, stderr) a run view carries; the rest is counted, not sent. */
export const RUN_OUTPUT_MAX_BYTES = 64 * 1024;
/**
 * Versions a Change's subject view carries, newest first (`version_count` counts all); a list row
 * carries the newest 5.
 */
export const CHANGE_VERSIONS_MAX = 100;
export const CHANGE_LIST_VERSIONS = 5;
/** Changed paths shown in a Change's revision diff (the total is counted). */
export const DIFF_PATHS_MAX = 500;
/** Landings shown per target, newest first. */
export const TARGET_LANDINGS_MAX = 20;

export type UiView = 'changes' | 'tasks' | 'runs' | 'receipts' | 'targets' | 'registrations';

/** A JSON answer or a download. */
export type UiAnswer =
  | { readonly kind: 'json'; readonly body: string }
  | { readonly kind: 'download'; readonly body: Buffer; readonly filename: string };

/** What one dashboard request asks: the profile, the view, an optional item and the query. */
export interface UiRequest {
  readonly profile: HubProfile;
  readonly view: UiView;
  readonly item: string | null;
  readonly bundle: boolean;
  readonly query: URLSearchParams;
  readonly nowMs: number;
  /** The worker's Store of the profile's data directory, kept open across requests; read snapshots only. */
  readonly store: Store;
}

function invalidQuery(message: string): AgentscmError {
  return new AgentscmError('HUB_QUERY_INVALID', message, {
    hint: 'see docs/dashboard.md "Routes and bounds" for the parameters of each route',
  });
}

/** The query holds only `allowed` names, each at most once. */
export function checkQuery(query: URLSearchParams, allowed: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!allowed.includes(name))
      throw invalidQuery(
        `unknown query parameter ${JSON.stringify(name.slice(0, 64))}; this route takes ` +
          `${allowed.length === 0 ? 'none' : allowed.join(', ')}`,
      );
    if (seen.has(name)) throw invalidQuery(`query parameter ${name} is repeated`);
    seen.add(name);
  }
}

function decimal(query: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const text = query.get(name);
  if (text === null) return fallback;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) throw invalidQuery(`${name} must be a decimal integer`);
  const value = Number(text);
  if (value < min || value > max) throw invalidQuery(`${name} must be between ${min} and ${max}`);
  return value;
}

function page(query: URLSearchParams, max: number): { limit: number; cursor: number } {
  checkQuery(query, ['limit', 'cursor', ...(query.has('change') ? ['change'] : [])]);
  return {
    limit: decimal(query, 'limit', 1, max, Math.min(UI_PAGE_DEFAULT, max)),
    cursor: decimal(query, 'cursor', 0, Number.MAX_SAFE_INTEGER, 0),
  };
}

export function json(value: unknown): UiAnswer {
  return { kind: 'json', body: encodeCanonicalText(value as JsonValue) };
}

/** A refusal as data inside a view (a Change without a review context still lists). */
interface UiRefusal {
  readonly error: { readonly code: string; readonly message: string };
}

/** The review context of a Change's current version, as a view shows it. */
interface UiContext {
  readonly context_digest: string;
}

/** A command attempt's stdout or stderr, cut to RUN_OUTPUT_MAX_BYTES for the run view. */
interface UiBoundedOutput {
  readonly text: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly truncated: boolean;
}

function refusal(error: unknown): UiRefusal {
  if (!isAgentscmError(error)) throw error;
  return { error: { code: error.code, message: error.message } };
}

/**
 * `fn` in one journal read snapshot over the worker's Store; `empty` when the store never ran a task
 * (nothing is created).
 */
function withJournal<T>(store: Store, empty: T, fn: (journal: Journal) => T): T {
  const journal = store.journal(false);
  if (journal === null) return empty;
  return journalRead(journal, () => fn(journal));
}

function qualificationOf(profile: HubProfile, change: string, store: Store): JsonObject | UiRefusal {
  try {
    return qualificationToJson(
      qualifyLocal(store, {
        repository: profile.nativeRepository,
        profile: profile.profileId,
        target: profile.target,
        change,
      }),
    );
  } catch (error) {
    return refusal(error);
  }
}

/** The review context of the Change's current version at the current epoch, or why there is none. */
function contextOf(store: Store, repository: string, change: string, target: string): UiContext | UiRefusal {
  const auth = store.authority();
  try {
    return {
      context_digest: readTransaction(auth, () =>
        soleCurrentContext(auth, repository, change, () => targetSubjectRecipe(auth, repository, target)),
      ),
    };
  } catch (error) {
    return refusal(error);
  }
}

function newestVersions<T>(versions: readonly T[], max: number): T[] {
  return versions.slice(-max).reverse();
}

function changesView(request: UiRequest): UiAnswer {
  const { profile } = request;
  if (request.item !== null) {
    checkQuery(request.query, []);
    const change = showChange(request.store.authority(), {
      repository: profile.nativeRepository,
      change: request.item,
    });
    const policy = showPolicy(request.store.authority(), { repository: profile.nativeRepository });
    const target = policy.targets.find((t) => t.name === profile.target) ?? null;
    // `revision diff TARGET CHANGE`: the cost follows the change (shared subtrees are skipped).
    const diff =
      target === null
        ? null
        : diffRevisionView(request.store.authority(), {
            repository: profile.nativeRepository,
            from: target.revision,
            to: change.current_revision,
          });
    return json({
      change: {
        ...change,
        versions: newestVersions(change.versions, CHANGE_VERSIONS_MAX),
        version_count: change.versions.length,
      },
      policy_epoch: policy.policy_epoch,
      context: contextOf(request.store, profile.nativeRepository, change.id, profile.target),
      target: { name: profile.target, revision: target?.revision ?? null },
      qualification: qualificationOf(profile, change.id, request.store),
      diff:
        diff === null
          ? null
          : {
              from: diff.from,
              to: diff.to,
              total: diff.changes.length,
              changes: diff.changes.slice(0, DIFF_PATHS_MAX),
            },
    });
  }
  const { limit, cursor } = page(request.query, CHANGE_PAGE_MAX);
  // One snapshot for the page's Changes (change list and change show read the same rows); the
  // whole Change is read for this page only.
  const auth = request.store.authority();
  const { total, changes } = readTransaction(auth, () => {
    const all = listChanges(auth, profile.nativeRepository);
    return {
      total: all.length,
      changes: all.slice(cursor, cursor + limit).map((item) => getChange(auth, profile.nativeRepository, item.id)),
    };
  });
  return json({
    total,
    changes: changes.map((change) => ({
      id: change.id,
      current_version: change.current_version,
      current_revision: change.current_revision,
      version_count: change.versions.length,
      versions: newestVersions(change.versions, CHANGE_LIST_VERSIONS),
      qualification: qualificationOf(profile, change.id, request.store),
    })),
    next_cursor: cursor + limit < total ? String(cursor + limit) : null,
  });
}

function tasksView(request: UiRequest): UiAnswer {
  const { profile } = request;
  if (request.item !== null)
    throw new AgentscmError('HUB_ROUTE_NOT_FOUND', 'the tasks route lists pages only', {
      hint: 'use ?change=ID to list the tasks of one Change',
    });
  const { limit, cursor } = page(request.query, TASK_PAGE_MAX);
  const change = request.query.get('change');
  if (change !== null && (change.length === 0 || change.length > 128))
    throw invalidQuery('change must be a Change id of 1 to 128 characters');
  const auth = request.store.authority();
  return json(
    withJournal(request.store, { tasks: [], next_cursor: null }, (journal) =>
      readTransaction(auth, () =>
        taskPage(auth, journal, {
          repository: profile.nativeRepository,
          change,
          afterSeq: cursor,
          limit,
          nowMs: request.nowMs,
        }),
      ),
    ),
  );
}

function boundedOutput(stream: {
  readonly text: string;
  readonly bytes: number;
  readonly sha256: string;
}): UiBoundedOutput {
  const bytes = Buffer.from(stream.text, 'utf8');
  const truncated = bytes.byteLength > RUN_OUTPUT_MAX_BYTES;
  return {
    text: truncated ? bytes.subarray(0, RUN_OUTPUT_MAX_BYTES).toString('utf8') : stream.text,
    bytes: stream.bytes,
    sha256: stream.sha256,
    truncated,
  };
}

/**
 * One run (`skill-workflow status`) and, for each command step, its attempt (`check-command-show`)
 * with bounded output.
 */
function runView(profile: HubProfile, store: Store, runId: string): UiAnswer {
  const view = readRunStatus(store, runId);
  if (view.source.repository !== profile.nativeRepository) {
    throw new AgentscmError('WORKFLOW_RUN_NOT_FOUND', `no workflow run "${runId}" of this profile's repository`, {
      hint: 'list the runs of the repository first',
    });
  }
  const attempts = view.steps.flatMap((step) => {
    if (step.execution === null) return [];
    const attempt = showCommandAttempt(store, step.execution.attempt_id);
    return [
      {
        step_id: step.id,
        attempt_id: attempt.attempt_id,
        generation: attempt.generation,
        state: attempt.state,
        outcome: attempt.outcome,
        summary: attempt.summary,
        record_digest: attempt.record_digest,
        record: attempt.record,
        created_at_ms: attempt.created_at_ms,
        updated_at_ms: attempt.updated_at_ms,
        stdout: boundedOutput(attempt.stdout),
        stderr: boundedOutput(attempt.stderr),
      },
    ];
  });
  return json({ run: view, attempts });
}

function runsView(request: UiRequest): UiAnswer {
  if (request.item !== null) {
    checkQuery(request.query, []);
    return runView(request.profile, request.store, request.item);
  }
  const { limit, cursor } = page(request.query, RUN_PAGE_MAX);
  const runs = listRuns(request.store).runs.filter((run) => run.repository === request.profile.nativeRepository);
  return json({
    total: runs.length,
    runs: runs.slice(cursor, cursor + limit),
    next_cursor: cursor + limit < runs.length ? String(cursor + limit) : null,
  });
}

function receiptsView(request: UiRequest): UiAnswer {
  const { profile } = request;
  if (request.item !== null) {
    checkQuery(request.query, []);
    if (request.bundle) {
      const built = buildReceiptBundle(request.store, request.item);
      return { kind: 'download', body: built.bundle, filename: `receipt-${built.digest}.agscmrb` };
    }
    return json(showReceipt(request.store, request.item));
  }
  const { limit, cursor } = page(request.query, RECEIPT_PAGE_MAX);
  return json(
    withJournal(request.store, { receipts: [], next_cursor: null }, () =>
      receiptPage(request.store.authority(), {
        repository: profile.nativeRepository,
        afterRow: cursor,
        limit,
      }),
    ),
  );
}

function targetsView(request: UiRequest): UiAnswer {
  const { profile } = request;
  checkQuery(request.query, []);
  const { targets } = listTargetsInStore(request.store.authority(), { repository: profile.nativeRepository });
  const auth = request.store.authority();
  return json({
    targets: readTransaction(auth, () =>
      targets.map((target) => ({
        ...target,
        landings: listLandings(auth, profile.nativeRepository, target.name, TARGET_LANDINGS_MAX),
      })),
    ),
  });
}

function registrationsView(request: UiRequest): UiAnswer {
  const { profile } = request;
  checkQuery(request.query, []);
  const { registrations } = listRegistrationsInStore(request.store.authority(), {
    repository: profile.nativeRepository,
  });
  const policy = showPolicy(request.store.authority(), { repository: profile.nativeRepository });
  const auth = request.store.authority();
  const collectorProfiles = readTransaction(auth, () => listCollectorProfiles(auth)).filter(
    (p) => p.profile.repository_id === profile.nativeRepository,
  );
  return json({
    hub_profile: {
      repository_id: profile.repositoryId,
      profile_id: profile.profileId,
      target: profile.target,
      requirement_digest: profile.requirementDigest,
      policy_epoch: policy.policy_epoch,
    },
    registrations,
    collector_profiles: collectorProfiles.map((p) => ({
      collector_profile_id: p.collector_profile_id,
      step_id: p.profile.step_id,
      registration_id: p.profile.registration_id,
      registration_epoch: p.profile.registration_epoch,
      installed_at_ms: p.installed_at_ms,
    })),
  });
}

/** Answer one dashboard view request (the caller authenticated the reader grant for the profile). */
export function answerUiRequest(request: UiRequest): UiAnswer {
  switch (request.view) {
    case 'changes':
      return changesView(request);
    case 'tasks':
      return tasksView(request);
    case 'runs':
      return runsView(request);
    case 'receipts':
      return receiptsView(request);
    case 'targets':
      return targetsView(request);
    case 'registrations':
      return registrationsView(request);
  }
}
