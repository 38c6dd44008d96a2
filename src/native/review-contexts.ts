/**
 * command/v1 review contexts in the authority (docs/command-collector.md "Review contexts": a
 * command step needs a real, existing, current Change and command/v1 ReviewContext that bind the
 * same revision, policy epoch, recipe, toolchain and environment). A context is created from the
 * Change's current version, the repository's current policy epoch and the recipe bytes at a
 * native source path of that version's revision; it is immutable and keyed by its digest.
 */
import { commandRecipeDigest, decodeCommandRecipe, RECIPE_LIMITS } from '../contracts/collector/command-recipe.js';
import { AgentscmError } from '../contracts/errors.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { validateRelativePath } from '../contracts/paths.js';
import {
  buildReviewContext,
  decodeReviewContext,
  encodeReviewContext,
  reviewContextDigest,
  reviewContextJson,
  type ReviewContext,
} from '../contracts/review/context.js';
import { getChange } from './changes.js';
import { checkDigest, checkGenericId, checkRepositoryId } from './checks.js';
import { currentPolicyEpoch } from './policy.js';
import { prefixRange, resolveHexPrefix } from './prefixes.js';
import { resolveRepository } from './repositories.js';
import { readRevisionFile } from './revisions.js';
import { u64ToSql } from './sqlite.js';
import type { Store } from './store-handle.js';
import { prepared, readTransaction, writeTransaction, type Authority } from './store.js';

export interface StoredReviewContext {
  readonly context_digest: string;
  readonly context: ReviewContext;
}

export interface CreateReviewContextInput {
  readonly repository: string;
  readonly changeId: string;
  /** The recipe's full native source path in the Change's current revision. */
  readonly runnerPath: string;
}

/**
 * Create (or find, when identical) the command/v1 context of the Change's current version
 * (docs/command-collector.md "Review contexts": the ReviewContext binding).
 */
export function createReviewContext(
  auth: Authority,
  input: CreateReviewContextInput,
): StoredReviewContext & { created: boolean } {
  checkRepositoryId(input.repository);
  checkGenericId(input.changeId, 'Change ID');
  const runnerPath = validateRelativePath(input.runnerPath, '--runner');
  return writeTransaction(auth, () => {
    const change = getChange(auth, input.repository, input.changeId);
    const epoch = currentPolicyEpoch(auth, input.repository);
    const bytes = readRevisionFile(auth, input.repository, change.current_revision, runnerPath, {
      maxBytes: RECIPE_LIMITS.maxRecipeBytes,
    });
    const recipe = decodeCommandRecipe(bytes);
    const context = buildReviewContext({
      repository: input.repository,
      change: { repository: input.repository, id: change.id },
      change_version: change.current_version,
      revision: change.current_revision,
      policy_epoch: epoch,
      recipe_path: runnerPath,
      recipe_digest: commandRecipeDigest(bytes),
      toolchain: recipe.toolchain,
      environment: recipe.environment,
    });
    const digest = reviewContextDigest(context);
    const result = prepared(
      auth,
      `INSERT INTO review_contexts (repository, context_digest, change_id, change_version, revision, policy_epoch,
        recipe_path, recipe_digest, toolchain, environment, canonical, created_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repository, context_digest) DO NOTHING`,
    ).run(
      input.repository,
      digest,
      change.id,
      u64ToSql(context.change_version),
      context.revision,
      u64ToSql(context.policy_epoch),
      context.recipe_path,
      context.recipe_digest,
      context.toolchain,
      context.environment,
      Buffer.from(encodeReviewContext(context)),
      Date.now(),
    );
    return { context_digest: digest, context, created: result.changes === 1 };
  });
}

/** The stored context, or null. Its canonical bytes are decoded strictly and re-digested. */
export function findReviewContext(
  auth: Authority,
  repository: string,
  contextDigest: string,
): StoredReviewContext | null {
  checkRepositoryId(repository);
  checkDigest(contextDigest, 'context digest');
  const row = prepared(auth, 'SELECT canonical FROM review_contexts WHERE repository = ? AND context_digest = ?').get(
    repository,
    contextDigest,
  ) as { canonical: Buffer } | undefined;
  if (row === undefined) return null;
  const context = decodeReviewContext(row.canonical);
  if (reviewContextDigest(context) !== contextDigest) {
    throw new AgentscmError('STORE_CORRUPT', `review context ${contextDigest} does not match its stored bytes`);
  }
  return { context_digest: contextDigest, context };
}

/** The stored context (CONTEXT_NOT_FOUND otherwise). */
export function getReviewContext(auth: Authority, repository: string, contextDigest: string): StoredReviewContext {
  const found = readTransaction(auth, () => findReviewContext(auth, repository, contextDigest));
  if (found === null) {
    throw new AgentscmError('CONTEXT_NOT_FOUND', `repository ${repository} has no review context ${contextDigest}`, {
      hint: 'create it with `agentscm context create --change ID --runner PATH` and use the printed context_digest',
    });
  }
  return found;
}

/**
 * The full digest of the repository's review context that `reference` names: the full 64-hex
 * digest or a unique prefix of at least 8 hex digits (docs/cli.md "Prefixes"). The same value
 * goes to the caller's own lookup, so an unknown full digest keeps its usual error.
 */
export function resolveContextRef(auth: Authority, repository: string, reference: string): string {
  checkRepositoryId(repository);
  return resolveHexPrefix(reference, {
    what: 'review context',
    notFound: 'CONTEXT_NOT_FOUND',
    listHint: '`agentscm context create` prints the context_digest',
    candidates: (prefix) => {
      const [low, high] = prefixRange(prefix);
      const row = prepared(
        auth,
        'SELECT count(*) AS n, min(context_digest) AS first FROM review_contexts WHERE repository = ? AND ' +
          'context_digest >= ? AND context_digest < ?',
      ).get(repository, low, high) as {
        n: number;
        first: string | null;
      };
      return { count: row.n, first: row.first };
    },
  });
}

/** How many contexts an ambiguity error lists (the count is always given). */
const LISTED_CONTEXTS = 8;

/** A review context of a Change version, by digest and the recipe it binds. */
export interface VersionContextRow {
  readonly context_digest: string;
  readonly recipe_path: string;
}

/**
 * The review contexts of a Change version at a revision and policy epoch, in digest order, read
 * inside the caller's transaction. A context is a pure function of those and the recipe bytes at
 * its path, so there is at most one per recipe path.
 */
export function versionContexts(
  auth: Authority,
  input: {
    readonly repository: string;
    readonly changeId: string;
    readonly version: bigint;
    readonly revision: string;
    readonly policyEpoch: bigint;
  },
): VersionContextRow[] {
  return prepared(
    auth,
    'SELECT context_digest, recipe_path FROM review_contexts WHERE repository = ? AND change_id = ? AND ' +
      'change_version = ? AND revision = ? AND policy_epoch = ? ORDER BY context_digest',
  ).all(
    input.repository,
    input.changeId,
    u64ToSql(input.version),
    input.revision,
    u64ToSql(input.policyEpoch),
  ) as VersionContextRow[];
}

/**
 * The review context of the Change's current version at the current policy epoch, read inside
 * the caller's transaction (the operator's qualification, admission, the agent-owned Stop hook
 * and every `--context` flag left out): CONTEXT_NOT_FOUND when there is none, the only one when
 * there is one. When there are several, `subjectRecipe` names the recipe path whose context is
 * the subject's (the first command step's, docs/checks.md "Several command checks"); it is only
 * called then. Without it, or when no context binds that path, CONTEXT_AMBIGUOUS lists them.
 */
export function soleCurrentContext(
  auth: Authority,
  repository: string,
  changeId: string,
  subjectRecipe?: () => string | null,
): string {
  const change = getChange(auth, repository, changeId);
  const rows = versionContexts(auth, {
    repository,
    changeId: change.id,
    version: change.current_version,
    revision: change.current_revision,
    policyEpoch: currentPolicyEpoch(auth, repository),
  });
  const [first, second] = rows;
  if (first === undefined) {
    throw new AgentscmError(
      'CONTEXT_NOT_FOUND',
      `Change ${change.id} has no review context for its current version ${change.current_version}`,
      {
        hint:
          '`agentscm checkpoint --change ID` creates the contexts the target requirement needs; or create one ' +
          'with `agentscm context create --change ID --runner PATH`, or pass --context DIGEST',
      },
    );
  }
  if (second === undefined) return first.context_digest;
  const recipe = subjectRecipe?.() ?? null;
  const chosen = recipe === null ? undefined : rows.find((r) => r.recipe_path === recipe);
  if (chosen !== undefined) return chosen.context_digest;
  const listed = rows.slice(0, LISTED_CONTEXTS).map((r) => `${r.context_digest} (recipe ${r.recipe_path})`);
  const more = rows.length > LISTED_CONTEXTS ? ` and ${rows.length - LISTED_CONTEXTS} more` : '';
  throw new AgentscmError(
    'CONTEXT_AMBIGUOUS',
    `Change ${change.id} has ${rows.length} review contexts for its current version ${change.current_version}: ` +
      `${listed.join(', ')}${more}`,
    {
      hint: 'pass --context DIGEST (a unique prefix of 8 or more hex digits is enough) to name one',
      details: { contexts: rows.map((r) => ({ context_digest: r.context_digest, recipe_path: r.recipe_path })) },
    },
  );
}

/**
 * A `--context DIGEST` flag of the local commands (agent-task call, agent-task claim,
 * qualification): a full digest is returned as given, without opening the store; a prefix is
 * resolved against the repository (an ID or name; undefined is the only repository).
 */
export function resolveContextArgument(store: Store, repository: string | undefined, reference: string): string {
  if (/^[0-9a-f]{64}$/.test(reference)) return reference;
  const auth = store.authority();
  return readTransaction(auth, () => resolveContextRef(auth, resolveRepository(auth, repository).id, reference));
}

/**
 * A `--context` flag that may be left out (agent-task claim, agent-task call): as given, it is
 * resolveContextArgument; left out, it is the Change's current context (soleCurrentContext, with
 * the caller's choice among several).
 */
export function resolveContextFlag(
  store: Store,
  input: {
    readonly repository: string | undefined;
    readonly change: string;
    readonly context: string | undefined;
    /** Called with the repository id when the version has several contexts. */
    readonly subjectRecipe?: (auth: Authority, repository: string) => string | null;
  },
): string {
  if (input.context !== undefined) return resolveContextArgument(store, input.repository, input.context);
  const auth = store.authority();
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, input.repository).id;
    const subjectRecipe = input.subjectRecipe;
    return soleCurrentContext(
      auth,
      repository,
      input.change,
      subjectRecipe === undefined ? undefined : () => subjectRecipe(auth, repository),
    );
  });
}

/** What a command step expects its context to bind. */
export interface ExpectedCommandContext {
  readonly repository: string;
  readonly contextDigest: string;
  readonly change: { readonly repository: string; readonly id: string };
  readonly changeVersion: bigint;
  readonly revision: string;
  readonly policyEpoch: bigint;
  readonly recipeDigest: string;
  readonly toolchain: string;
  readonly environment: string;
  /** When given, the recipe's full native source path must match too. */
  readonly recipePath?: string;
}

/**
 * Check that a command step's context is real, existing and current and binds the same Change,
 * revision, policy epoch, recipe, toolchain and environment
 * (docs/command-collector.md "Review contexts"). Call inside the caller's read snapshot.
 */
export function checkCommandContext(auth: Authority, expected: ExpectedCommandContext): StoredReviewContext {
  return readTransaction(auth, () => {
    const stored = getReviewContext(auth, expected.repository, expected.contextDigest);
    const c = stored.context;
    const mismatches: string[] = [];
    if (c.repository !== expected.repository) mismatches.push('repository');
    if (c.change.repository !== expected.change.repository || c.change.id !== expected.change.id)
      mismatches.push('change');
    if (c.change_version !== expected.changeVersion) mismatches.push('change_version');
    if (c.revision !== expected.revision) mismatches.push('revision');
    if (c.policy_epoch !== expected.policyEpoch) mismatches.push('policy_epoch');
    if (c.recipe_digest !== expected.recipeDigest) mismatches.push('recipe_digest');
    if (c.toolchain !== expected.toolchain) mismatches.push('toolchain');
    if (c.environment !== expected.environment) mismatches.push('environment');
    if (expected.recipePath !== undefined && c.recipe_path !== expected.recipePath) mismatches.push('recipe_path');
    if (mismatches.length > 0) {
      throw new AgentscmError(
        'CONTEXT_MISMATCH',
        `review context ${expected.contextDigest} binds a different ${mismatches.join(', ')}`,
        {
          hint: 'create a context for this exact revision and recipe with `agentscm context create`',
          details: { fields: mismatches },
        },
      );
    }
    const change = getChange(auth, c.change.repository, c.change.id);
    const epoch = currentPolicyEpoch(auth, c.repository);
    if (
      change.current_version !== c.change_version ||
      change.current_revision !== c.revision ||
      epoch !== c.policy_epoch
    ) {
      throw new AgentscmError(
        'CONTEXT_STALE',
        `review context ${expected.contextDigest} binds Change ${c.change.id} version ${c.change_version} at ` +
          `policy epoch ${c.policy_epoch}; the Change is at version ${change.current_version} and the policy ` +
          `epoch is ${epoch}`,
        {
          hint: 'create a new context for the current version with `agentscm context create`',
          details: { current_version: change.current_version.toString(), policy_epoch: epoch.toString() },
        },
      );
    }
    return stored;
  });
}

export interface CreatedContextView {
  readonly context_digest: string;
  readonly created: boolean;
  readonly context: JsonObject;
}

/** `agentscm context create` on the command's write Store: resolve the repository, create the context. */
export function createReviewContextInStore(input: {
  store: Store;
  repository: string | undefined;
  change: string;
  runner: string;
}): CreatedContextView {
  const auth = input.store.authority();
  const repository = resolveRepository(auth, input.repository);
  const created = createReviewContext(auth, {
    repository: repository.id,
    changeId: input.change,
    runnerPath: input.runner,
  });
  return {
    context_digest: created.context_digest,
    created: created.created,
    context: reviewContextJson(created.context),
  };
}
