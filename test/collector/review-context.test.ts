/**
 * command/v1 review contexts: creation from the Change's current version, the digest (checked
 * against an independent computation of docs/wire.md's domain digest), idempotency, and the
 * currency and binding checks the workflow compiler relies on.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import test from 'node:test';

import { commandRecipeDigest } from '../../src/contracts/collector/command-recipe.js';
import { bumpPolicyEpoch } from '../../src/native/policy.js';
import {
  checkCommandContext,
  createReviewContext,
  getReviewContext,
  type ExpectedCommandContext,
} from '../../src/native/review-contexts.js';
import { openAuthority } from '../../src/native/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { makeRepo, RECIPE_PATH, recipeBytes } from '../support/collector.js';

const RECIPE = recipeBytes({ argv: ['/bin/true'] });

function independentDigest(json: string): string {
  const body = Buffer.from(json, 'utf8');
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(body.length));
  return createHash('sha256')
    .update('agentscm.review-context.v1')
    .update(Buffer.from([0]))
    .update(length)
    .update(body)
    .digest('hex');
}

test('context create binds the current version and prints the digest of the canonical context', async (t) => {
  const repo = makeRepo(t, { [RECIPE_PATH]: RECIPE, 'skills/check/SKILL.md': '# check\n' });
  const { revision } = repo.checkpoint('c1');
  const result = await runCli([
    '--data-dir',
    repo.dataDir,
    'context',
    'create',
    '--change',
    'c1',
    '--runner',
    RECIPE_PATH,
    '--json',
  ]);
  assert.equal(result.code, 0, result.stderr);
  const created = jsonOf<{ context_digest: string; created: boolean; context: Record<string, unknown> }>(result);
  assert.equal(created.created, true);
  const canonical =
    `{"version":1,"kind":"command/v1","repository":"${repo.repository}","change":{"repository":"${repo.repository}","id":"c1"},"change_version":1,` +
    `"revision":"${revision}","policy_epoch":0,"recipe_path":"${RECIPE_PATH}","recipe_digest":"${commandRecipeDigest(RECIPE)}","toolchain":"busybox-1","environment":"posix-sh-offline"}`;
  assert.equal(created.context_digest, independentDigest(canonical));
  assert.deepEqual(created.context, JSON.parse(canonical));

  const human = await runCli([
    '--data-dir',
    repo.dataDir,
    'context',
    'create',
    '--change',
    'c1',
    '--runner',
    RECIPE_PATH,
  ]);
  assert.equal(human.code, 0);
  assert.equal(human.stdout.trim(), created.context_digest, 'the same context again, printed alone');
});

test("a context is current only for the Change's current version and the current policy epoch", (t) => {
  const repo = makeRepo(t, { [RECIPE_PATH]: RECIPE });
  const v1 = repo.checkpoint('c1');
  const auth = openAuthority(repo.dataDir, { mode: 'write' });
  t.after(() => auth.close());
  const first = createReviewContext(auth, { repository: repo.repository, changeId: 'c1', runnerPath: RECIPE_PATH });
  const again = createReviewContext(auth, { repository: repo.repository, changeId: 'c1', runnerPath: RECIPE_PATH });
  assert.equal(again.created, false);
  assert.equal(again.context_digest, first.context_digest);
  const expected: ExpectedCommandContext = {
    repository: repo.repository,
    contextDigest: first.context_digest,
    change: { repository: repo.repository, id: 'c1' },
    changeVersion: 1n,
    revision: v1.revision,
    policyEpoch: 0n,
    recipeDigest: commandRecipeDigest(RECIPE),
    toolchain: 'busybox-1',
    environment: 'posix-sh-offline',
    recipePath: RECIPE_PATH,
  };
  assert.equal(checkCommandContext(auth, expected).context_digest, first.context_digest);
  assert.throws(() => checkCommandContext(auth, { ...expected, recipeDigest: 'e'.repeat(64) }), {
    code: 'CONTEXT_MISMATCH',
  });
  assert.throws(() => checkCommandContext(auth, { ...expected, toolchain: 'other' }), { code: 'CONTEXT_MISMATCH' });
  assert.throws(() => checkCommandContext(auth, { ...expected, environment: 'other' }), { code: 'CONTEXT_MISMATCH' });
  assert.throws(() => checkCommandContext(auth, { ...expected, revision: 'd'.repeat(64) }), {
    code: 'CONTEXT_MISMATCH',
  });
  assert.throws(() => checkCommandContext(auth, { ...expected, contextDigest: 'c'.repeat(64) }), {
    code: 'CONTEXT_NOT_FOUND',
  });

  bumpPolicyEpoch(auth, repo.repository);
  assert.throws(() => checkCommandContext(auth, expected), { code: 'CONTEXT_STALE' });
  const atEpoch1 = createReviewContext(auth, { repository: repo.repository, changeId: 'c1', runnerPath: RECIPE_PATH });
  assert.notEqual(atEpoch1.context_digest, first.context_digest);
  assert.equal(
    checkCommandContext(auth, { ...expected, contextDigest: atEpoch1.context_digest, policyEpoch: 1n }).context
      .policy_epoch,
    1n,
  );

  repo.write('more.txt', 'new version\n');
  const v2 = repo.checkpoint('c1');
  assert.equal(v2.version, 2n);
  assert.throws(
    () => checkCommandContext(auth, { ...expected, contextDigest: atEpoch1.context_digest, policyEpoch: 1n }),
    { code: 'CONTEXT_STALE' },
  );
  assert.equal(
    getReviewContext(auth, repo.repository, first.context_digest).context.change_version,
    1n,
    'old contexts stay readable',
  );
});

test('bad input is refused with its code and creates nothing', async (t) => {
  const repo = makeRepo(t, { [RECIPE_PATH]: RECIPE, 'not-a-recipe.json': '{"version":1}' });
  repo.checkpoint('c1');
  const cases: [string[], string, number][] = [
    [['--change', 'c1', '--runner', 'skills/check/missing.json'], 'PATH_NOT_FOUND', 2],
    [['--change', 'c1', '--runner', '../escape.json'], 'PATH_INVALID', 2],
    [['--change', 'c1', '--runner', 'not-a-recipe.json'], 'SCHEMA_MISSING_FIELD', 2],
    [['--change', 'no-such-change', '--runner', RECIPE_PATH], 'CHANGE_NOT_FOUND', 2],
  ];
  for (const [args, expected, exit] of cases) {
    const result = await runCli(['--data-dir', repo.dataDir, 'context', 'create', ...args, '--json']);
    assert.equal(result.code, exit, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, expected);
  }
  const auth = openAuthority(repo.dataDir, { mode: 'read' });
  t.after(() => auth.close());
  const count = auth.db.prepare('SELECT count(*) AS n FROM review_contexts').get() as { n: number };
  assert.equal(count.n, 0);
});
