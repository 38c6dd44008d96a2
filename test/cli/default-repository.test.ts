/**
 * One repository by default (docs/cli.md "Choosing the repository"): one store with two
 * repositories, each bound to its own workspace. From inside a workspace every command acts on
 * that workspace's repository without --repository; outside any workspace the store's two
 * repositories need --repository; --repository always wins; a workspace bound to another store
 * gives no default for this one.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { scenarioRecipe } from '../helpers/scenario.js';

const RUNNER = 'skills/check/runner.json';

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

interface Repo {
  readonly ws: string;
  readonly id: string;
  readonly name: string;
}

/** A workspace with a runner recipe and a skill, bound to `dataDir` as `name`, with Change c1 checkpointed. */
async function boundRepo(root: string, dataDir: string, name: string): Promise<Repo> {
  const ws = join(root, name);
  mkdirSync(join(ws, 'skills', 'check'), { recursive: true });
  writeFileSync(join(ws, 'skills', 'check', 'SKILL.md'), '---\nname: check\ndescription: check\n---\n\nCheck.\n');
  writeFileSync(join(ws, RUNNER), JSON.stringify(scenarioRecipe(['/bin/true'])));
  writeFileSync(join(ws, 'a.txt'), `${name}\n`);
  const init = jsonOf<{ repository: string }>(
    ok(await runCli(['--data-dir', dataDir, 'init-repo', ws, '--name', name, '--json']), 'init-repo'),
  );
  writeFileSync(join(ws, 'a.txt'), `${name} edited\n`);
  ok(await runCli(['checkpoint', '--change', 'c1', '--json'], { cwd: ws }), 'checkpoint');
  return { ws, id: init.repository, name };
}

// One world for every test (each CLI run is a process start): a store with two repositories.
let root = '';
let dataDir = '';
let a: Repo;
let b: Repo;
before(async () => {
  root = mkdtempSync(join(tmpdir(), 'agentscm-default-repo-'));
  dataDir = join(root, 'data');
  a = await boundRepo(root, dataDir, 'alpha');
  b = await boundRepo(root, dataDir, 'beta');
});
after(() => rmSync(root, { recursive: true, force: true }));

test('inside each of two workspaces every command picks that workspace repository', async () => {
  for (const repo of [a, b]) {
    const inside = (args: string[]): Promise<CliResult> =>
      runCli([...args, '--json'], { cwd: join(repo.ws, 'skills') });
    const policy = jsonOf<{ repository: string }>(ok(await inside(['policy', 'show']), 'policy show'));
    assert.equal(policy.repository, repo.id);
    const change = jsonOf<{ repository: string }>(ok(await inside(['change', 'show', 'c1']), 'change show'));
    assert.equal(change.repository, repo.id);
    const changes = jsonOf<{ changes: { repository: string }[] }>(ok(await inside(['change', 'list']), 'change list'));
    assert.deepEqual(
      changes.changes.map((c) => c.repository),
      [repo.id],
    );
    const targets = jsonOf<{ targets: { repository: string }[] }>(ok(await inside(['target', 'list']), 'target list'));
    assert.deepEqual(
      targets.targets.map((x) => x.repository),
      [repo.id],
    );
    const revisions = jsonOf<{ revisions: { repository: string }[] }>(
      ok(await inside(['revision', 'list']), 'revision list'),
    );
    assert.ok(revisions.revisions.length >= 2);
    assert.ok(revisions.revisions.every((r) => r.repository === repo.id));
    const context = jsonOf<{ context: { change: { repository: string } } }>(
      ok(await inside(['context', 'create', '--change', 'c1', '--runner', RUNNER]), 'context create'),
    );
    assert.equal(context.context.change.repository, repo.id);
    const grant = jsonOf<{ grant: { repository: string } }>(
      ok(
        await inside([
          'grant',
          'create',
          '--actor',
          `${repo.name}/agent`,
          '--token-file',
          join(root, `${repo.name}.tok`),
        ]),
        'grant create',
      ),
    );
    assert.equal(grant.grant.repository, repo.id);
    const grants = jsonOf<{ grants: { repository: string }[] }>(ok(await inside(['grant', 'list']), 'grant list'));
    assert.deepEqual(
      grants.grants.map((g) => g.repository),
      [repo.id],
    );
    // No requirement is installed: the refusal names this workspace's repository's target, not a choice.
    const qualification = await inside(['qualification', '--change', 'c1']);
    assert.doesNotMatch(qualification.stderr, /say which one/);
  }
});

test('--repository overrides the workspace default', async () => {
  const shown = jsonOf<{ repository: string }>(
    ok(await runCli(['policy', 'show', '--repository', b.name, '--json'], { cwd: a.ws }), 'policy show'),
  );
  assert.equal(shown.repository, b.id);
  const listed = jsonOf<{ changes: { repository: string }[] }>(
    ok(await runCli(['change', 'list', '--repository', b.id, '--json'], { cwd: a.ws }), 'change list'),
  );
  assert.deepEqual(
    listed.changes.map((c) => c.repository),
    [b.id],
  );
});

test('outside any workspace two repositories need --repository; lists cover both', async () => {
  for (const args of [
    ['policy', 'show'],
    ['change', 'show', 'c1'],
    ['context', 'create', '--change', 'c1', '--runner', RUNNER],
  ]) {
    const result = await runCli(['--data-dir', dataDir, ...args, '--json'], { cwd: root });
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(
      result.stderr,
      /^error\[USAGE\]: the native store holds 2 repositories; say which one; pass --repository/,
    );
    assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, 'USAGE');
  }
  const listed = jsonOf<{ changes: { repository: string }[] }>(
    ok(await runCli(['--data-dir', dataDir, 'change', 'list', '--json'], { cwd: root }), 'change list'),
  );
  assert.deepEqual(listed.changes.map((c) => c.repository).sort(), [a.id, b.id].sort());
});

test('a workspace bound to another store gives no default for --data-dir', async () => {
  const otherData = join(root, 'other-data');
  const other = await boundRepo(root, otherData, 'gamma');
  // Inside alpha's workspace, naming gamma's store: its only repository, not alpha's ID.
  const shown = jsonOf<{ repository: string }>(
    ok(await runCli(['policy', 'show', '--data-dir', otherData, '--json'], { cwd: a.ws }), 'policy show'),
  );
  assert.equal(shown.repository, other.id);
  const listed = jsonOf<{ changes: { repository: string }[] }>(
    ok(await runCli(['change', 'list', '--json'], { cwd: a.ws, env: { AGENTSCM_DATA_DIR: otherData } }), 'list'),
  );
  assert.deepEqual(
    listed.changes.map((c) => c.repository),
    [other.id],
  );
});

test('the enclosing workspace of the working directory decides, also with the same --data-dir', async () => {
  const result = await runCli(['--data-dir', dataDir, 'policy', 'show', '--json'], { cwd: b.ws });
  assert.equal(jsonOf<{ repository: string }>(ok(result, 'policy show')).repository, b.id);
  const outside = await runCli(['--data-dir', dataDir, 'policy', 'show', '--json'], { cwd: root });
  assert.equal(outside.code, 2);
});
