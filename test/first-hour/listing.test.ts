/**
 * docs/cli.md "Listing what is in the store" and "Prefixes": change, revision, target, registration and run lists
 * (human output with repository names, --json), revision prefixes of at least 8 hex digits,
 * and the messages of item 14 (a missing target, a short revision).
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

function assertCode(result: CliResult, code: string, exit: number): string {
  assert.equal(result.code, exit, result.stderr);
  assert.match(result.stderr, new RegExp(`^error\\[${code}\\]: `));
  return result.stderr;
}

// Not buildScenario: the lists are checked against the documented example repository and skill.
test('the lists show what is in the store, with repository names beside IDs, and prefixes name revisions', async (t) => {
  const root = tempDir(t);
  const data = join(root, 'data');
  const ws = join(root, 'demo');
  cpSync(join(REPO_ROOT, 'examples', 'demo-repo'), ws, { recursive: true });
  mkdirSync(join(ws, 'skills'));
  cpSync(join(REPO_ROOT, 'examples', 'skills', 'native-workflow'), join(ws, 'skills', 'native-workflow'), {
    recursive: true,
  });
  const cli = (args: string[]): Promise<CliResult> => runCli(['--data-dir', data, ...args]);
  const init = jsonOf<{ repository: string; revision: string }>(
    ok(await cli(['init-repo', ws, '--name', 'demo', '--json'])),
  );
  writeFileSync(join(ws, 'src', 'greet.js'), 'export const greet = (n) => `Hi ${n}`;\n');
  const v1 = jsonOf<{ revision: string }>(
    ok(await cli(['checkpoint', '--change', 'fix-1', '--workspace', ws, '--json'])),
  );

  // Changes.
  const changes = jsonOf<{ changes: Record<string, unknown>[] }>(ok(await cli(['change', 'list', '--json'])));
  assert.deepEqual(changes.changes, [
    {
      repository: init.repository,
      repository_name: 'demo',
      id: 'fix-1',
      current_version: 1,
      current_revision: v1.revision,
    },
  ]);
  assert.match(
    ok(await cli(['change', 'list'])).stdout,
    new RegExp(`^demo \\(${init.repository}\\)  fix-1  v1  ${v1.revision}\n$`),
  );

  // Revisions, all and by Change.
  const revisions = jsonOf<{ revisions: { id: string; parent: string | null; version: number | null }[] }>(
    ok(await cli(['revision', 'list', '--json'])),
  );
  assert.deepEqual(
    revisions.revisions.map((r) => [r.id, r.parent]),
    [
      [init.revision, null],
      [v1.revision, init.revision],
    ],
  );
  const byChange = jsonOf<{ revisions: { id: string; change: string; version: number }[] }>(
    ok(await cli(['revision', 'list', '--change', 'fix-1', '--json'])),
  );
  assert.deepEqual(
    byChange.revisions.map((r) => [r.change, r.version, r.id]),
    [['fix-1', 1, v1.revision]],
  );
  assert.match(
    ok(await cli(['revision', 'list', '--change', 'fix-1'])).stdout,
    /^demo \([0-9a-f]{32}\) {2}fix-1 v1 {2}[0-9a-f]{64} {2}parent [0-9a-f]{64} {2}\d+ entries\n$/,
  );

  // A unique prefix of 8 or more digits names the revision in show and cat.
  const shown = jsonOf<{ id: string }>(ok(await cli(['revision', 'show', v1.revision.slice(0, 8), '--json'])));
  assert.equal(shown.id, v1.revision);
  const cat = ok(await cli(['revision', 'cat', v1.revision.slice(0, 12), 'src/greet.js']));
  assert.equal(cat.stdout, readFileSync(join(ws, 'src', 'greet.js'), 'utf8'));
  // Shorter than 8 digits: refused, with a hint that is not the message again.
  const short = assertCode(await cli(['revision', 'show', v1.revision.slice(0, 6)]), 'ID_INVALID', 2);
  assert.match(
    short,
    new RegExp(
      'is neither 64 lowercase hex digits nor a prefix of at least 8 of them; ' +
        '`agentscm revision list` shows the revisions\\n$',
    ),
  );
  // Unknown: the not-found code with its count of candidates.
  const unknown =
    [...'0123456789abcdef'].map((c) => c.repeat(8)).find((p) => !revisions.revisions.some((r) => r.id.startsWith(p))) ??
    '';
  assert.match(
    assertCode(await cli(['revision', 'show', unknown]), 'REVISION_NOT_FOUND', 2),
    /no revision starts with [0-9a-f]{8} \(0 candidates\)/,
  );

  // Targets and the workflow run, with the requirement installed.
  const workflow = JSON.parse(
    readFileSync(join(REPO_ROOT, 'examples', 'workflows', 'verify-with-omission.json'), 'utf8'),
  ) as { source: Record<string, string> };
  workflow.source.repository = init.repository;
  workflow.source.revision = v1.revision;
  const file = join(root, 'workflow.json');
  writeFileSync(file, JSON.stringify(workflow));
  ok(await cli(['skill-workflow', 'run', 'run-1', file]));
  const installed = jsonOf<{ requirement_digest: string }>(
    ok(await cli(['requirement', 'install', '--target', 'main', file, '--json'])),
  );
  const targets = jsonOf<{ targets: Record<string, unknown>[] }>(ok(await cli(['target', 'list', '--json'])));
  assert.deepEqual(targets.targets, [
    {
      repository: init.repository,
      repository_name: 'demo',
      name: 'main',
      revision: init.revision,
      requirement_digest: installed.requirement_digest,
    },
  ]);
  assert.match(
    ok(await cli(['target', 'list'])).stdout,
    new RegExp(
      `^demo \\(${init.repository}\\)  main  ${init.revision}  requirement ${installed.requirement_digest}\n$`,
    ),
  );
  const runs = jsonOf<{ runs: Record<string, unknown>[] }>(ok(await cli(['skill-workflow', 'list', '--json'])));
  assert.equal(runs.runs.length, 1);
  assert.equal(runs.runs[0]?.run_id, 'run-1');
  assert.equal(runs.runs[0]?.repository_name, 'demo');
  assert.equal(runs.runs[0]?.state, 'completed_with_omissions');
  assert.match(
    ok(await cli(['skill-workflow', 'list'])).stdout,
    /^run-1 {2}completed_with_omissions {2}\S+ {2}demo \([0-9a-f]{32}\) {2}revision [0-9a-f]{64} {2}\d+ steps?\n$/,
  );

  // A missing target is TARGET_NOT_FOUND naming it, not a hint to install onto main.
  const missing = assertCode(await cli(['requirement', 'show', '--target', 'dev']), 'TARGET_NOT_FOUND', 2);
  assert.match(missing, /repository demo has no target "dev"; its targets: main\n$/);

  // Registrations.
  ok(await runCli(['agent-task', 'key', '--state-dir', join(root, 'keys')]));
  const key = JSON.parse(readFileSync(join(root, 'keys', 'signing-key.json'), 'utf8')) as { public_key: string };
  const enrolled = jsonOf<{ registration_id: string }>(
    ok(
      await cli([
        'agent-task',
        'enroll',
        '--profile',
        'default',
        '--step',
        'verify-skill',
        '--executor',
        'box-1',
        '--public-key',
        key.public_key,
        '--json',
      ]),
    ),
  );
  const registrations = jsonOf<{ registrations: Record<string, unknown>[] }>(
    ok(await cli(['agent-task', 'registration', 'list', '--json'])),
  );
  assert.equal(registrations.registrations.length, 1);
  assert.equal(registrations.registrations[0]?.registration_id, enrolled.registration_id);
  assert.equal(registrations.registrations[0]?.repository_name, 'demo');
  assert.equal(registrations.registrations[0]?.current, true);
  assert.match(
    ok(await cli(['agent-task', 'registration', 'list'])).stdout,
    new RegExp(
      '^demo \\([0-9a-f]{32}\\) {2}profile default {2}step verify-skill {2}executor box-1 ' +
        '{2}epoch 1 {2}current {2}\\S+\\n$',
    ),
  );
});

test('a prefix that matches several revisions is refused with the count of candidates', async (t) => {
  const root = tempDir(t);
  const data = join(root, 'data');
  const ws = join(root, 'p');
  mkdirSync(ws);
  writeFileSync(join(ws, 'f.txt'), 'x');
  const init = jsonOf<{ repository: string; revision: string }>(
    ok(await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'p', '--json'])),
  );
  // Two more revisions whose IDs share 8 digits cannot be made by hashing in a test's time:
  // they are written beside the real one, as copies of its row under crafted IDs.
  const db = new Database(join(data, 'native', 'authority.sqlite'));
  try {
    const seq = (db.prepare('SELECT max(seq) AS s FROM repository_revisions').get() as { s: number }).s;
    for (const [i, id] of [`deadbeef${'0'.repeat(56)}`, `deadbeef${'1'.repeat(56)}`].entries()) {
      db.prepare(
        'INSERT INTO revisions (id, parent, tree, entry_count, total_bytes) ' +
          'SELECT ?, parent, tree, entry_count, total_bytes FROM revisions WHERE id = ?',
      ).run(id, init.revision);
      db.prepare('INSERT INTO repository_revisions (repository, revision, seq) VALUES (?, ?, ?)').run(
        init.repository,
        id,
        seq + 1000 + i,
      );
    }
  } finally {
    db.close();
  }
  const ambiguous = await runCli(['--data-dir', data, 'revision', 'show', 'deadbeef', '--json']);
  assertCode(ambiguous, 'ID_PREFIX_AMBIGUOUS', 2);
  assert.match(ambiguous.stderr, /revision prefix deadbeef matches 2 candidates; give more digits/);
  assert.equal(jsonOf<{ error: { code: string } }>(ambiguous).error.code, 'ID_PREFIX_AMBIGUOUS');
  // One more digit makes it unique.
  const unique = jsonOf<{ id: string }>(
    ok(await runCli(['--data-dir', data, 'revision', 'show', 'deadbeef1', '--json'])),
  );
  assert.equal(unique.id, `deadbeef${'1'.repeat(56)}`);
});

test('on a fresh store the lists are empty, say so, and create nothing', async (t) => {
  const root = tempDir(t);
  const data = join(root, 'data');
  const ws = join(root, 'p');
  mkdirSync(ws);
  writeFileSync(join(ws, 'a.txt'), 'a');
  ok(await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'p']));
  const before = readdirSync(data).sort();
  assert.deepEqual(jsonOf(ok(await runCli(['--data-dir', data, 'skill-workflow', 'list', '--json']))), { runs: [] });
  assert.deepEqual(jsonOf(ok(await runCli(['--data-dir', data, 'change', 'list', '--json']))), { changes: [] });
  assert.deepEqual(jsonOf(ok(await runCli(['--data-dir', data, 'agent-task', 'registration', 'list', '--json']))), {
    registrations: [],
  });
  assert.equal(ok(await runCli(['--data-dir', data, 'skill-workflow', 'list'])).stdout, 'no workflow runs\n');
  assert.match(
    ok(await runCli(['--data-dir', data, 'agent-task', 'registration', 'list'])).stdout,
    /^no executor registrations/,
  );
  assert.deepEqual(readdirSync(data).sort(), before, 'no journal or other file was created');
  // Without a store at all, a list is STORE_NOT_INITIALIZED and creates nothing either.
  const missing = join(root, 'missing');
  assertCode(await runCli(['--data-dir', missing, 'change', 'list']), 'STORE_NOT_INITIALIZED', 4);
  assert.equal(existsSync(missing), false);
});
