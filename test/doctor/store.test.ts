/**
 * `agentscm doctor` on the store of a data directory: a missing store is reported and nothing is
 * created; a healthy store passes and every file stays byte-identical; a damaged database, an old
 * schema and directories others can enter are findings with their code and fix, never a crash.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import { AUTHORITY_MIGRATIONS } from '../../src/native/migrations/index.js';
import { withStore } from '../../src/tasks/store.js';
import { initRepo } from '../../src/workspace/init.js';
import { buildScenario } from '../helpers/scenario.js';
import { tempDir } from '../helpers/tmp.js';
import { openJournal } from '../support/journal.js';
import { doctor, findingOf, fingerprint, problems, testHome } from './fixture.js';

/** A store made by init-repo, with a journal, in a fresh directory. */
// Kept by hand: these tests are about a bare store (no Change, workflow or requirement), not the scenario.
function makeStore(t: TestContext): { root: string; dataDir: string } {
  const root = tempDir(t, 'agentscm-doctor-');
  const workspace = join(root, 'ws');
  const dataDir = join(root, 'data');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'README.md'), 'demo\n');
  withStore(dataDir, 'write', (store) => initRepo(store, { path: workspace, name: 'demo' }));
  openJournal(dataDir, 'create').close();
  return { root, dataDir };
}

test('a missing store is STORE_MISSING with the init-repo fix, and doctor creates nothing', async (t) => {
  const root = tempDir(t, 'agentscm-doctor-');
  const home = testHome(t);
  const dataDir = join(root, 'data');
  const { report } = await doctor(home, ['--data-dir', dataDir]);
  assert.equal(report.ok, false);
  const missing = findingOf(report, 'store', 'STORE_MISSING');
  assert.equal(missing.status, 'fail');
  assert.match(missing.fix ?? '', /init-repo PATH --name NAME/);
  assert.equal(findingOf(report, 'grants', 'NO_STORE').status, 'skip');
  assert.equal(existsSync(dataDir), false, 'the data directory was created');
  assert.deepEqual(readdirSync(root), []);
  assert.deepEqual(readdirSync(home), []);
});

test('a healthy store passes every store check, exits 0, and every file stays byte-identical', async (t) => {
  const { root, dataDir } = await buildScenario(t, { enrollStep: null });
  openJournal(dataDir, 'create').close();
  const home = testHome(t);
  const before = fingerprint(root);
  const { report } = await doctor(home, ['--data-dir', dataDir]);
  assert.equal(report.ok, true);
  assert.deepEqual(problems(report), []);
  assert.match(
    findingOf(report, 'store', 'OK').message,
    new RegExp(`schema version ${AUTHORITY_MIGRATIONS.length} \\(current\\), quick_check ok`),
  );
  findingOf(report, 'store.journal', 'OK');
  findingOf(report, 'store.permissions', 'OK');
  assert.match(
    findingOf(report, 'requirements', 'OK').message,
    /^target main of demo .*: requirement [0-9a-f]{64} installed$/,
  );
  findingOf(report, 'runtime', 'OK');
  assert.deepEqual(fingerprint(root), before);
});

test('a target without an installed requirement is REQUIREMENT_MISSING (a warning) with the install fix', async (t) => {
  const { root, dataDir } = makeStore(t);
  const before = fingerprint(root);
  const { report } = await doctor(testHome(t), ['--data-dir', dataDir]);
  const missing = findingOf(report, 'requirements', 'REQUIREMENT_MISSING');
  assert.equal(missing.status, 'warn');
  assert.equal(
    missing.fix,
    `install one: agentscm --data-dir ${dataDir} requirement install --repository demo --target main WORKFLOW.json`,
  );
  assert.equal(report.ok, true);
  assert.deepEqual(fingerprint(root), before);
});

test('the human form has one line per finding with its mark and fix, and a verdict line', async (t) => {
  const root = tempDir(t, 'agentscm-doctor-');
  const { result } = await doctor(testHome(t), ['--data-dir', join(root, 'data')], { json: false });
  assert.equal(result.code, 1);
  const lines = result.stdout.trimEnd().split('\n');
  assert.match(lines[0] ?? '', /^✓ node: Node\.js /);
  assert.ok(
    lines.some((line) =>
      /^✗ store: no native store in .*; fix: create one with `agentscm --data-dir .* init-repo PATH --name NAME`/.test(
        line,
      ),
    ),
    result.stdout,
  );
  assert.ok(
    lines.some((line) => /^- hub\.config: no hub config was named; fix: pass --hub-config FILE/.test(line)),
    result.stdout,
  );
  assert.match(lines.at(-1) ?? '', /^FAILED: \d+ pass, \d+ warn, 1 fail, \d+ skipped$/);
  assert.match(result.stderr, /^error\[DOCTOR_FAILED\]: 1 check failed; /);
});

test('a database whose pages are damaged is STORE_CORRUPT from quick_check, not a crash, and is left as it was', async (t) => {
  const { root, dataDir } = makeStore(t);
  const db = join(dataDir, 'native', 'authority.sqlite');
  const pageSize = 4096;
  assert.ok(statSync(db).size >= 4 * pageSize);
  const fd = openSync(db, 'r+');
  try {
    // Pages 2 and 3 (table b-trees) overwritten; the header on page 1 stays valid.
    writeSync(fd, Buffer.alloc(2 * pageSize, 0xa5), 0, 2 * pageSize, pageSize);
  } finally {
    closeSync(fd);
  }
  const before = fingerprint(root);
  const { report } = await doctor(testHome(t), ['--data-dir', dataDir]);
  const corrupt = findingOf(report, 'store', 'STORE_CORRUPT');
  assert.equal(corrupt.status, 'fail');
  assert.match(corrupt.fix ?? '', /restore the data directory from a backup/);
  assert.equal(findingOf(report, 'grants', 'NO_STORE').status, 'skip');
  assert.deepEqual(fingerprint(root), before);
});

test('a database file that is not SQLite at all is STORE_CORRUPT', async (t) => {
  const { dataDir } = makeStore(t);
  const db = join(dataDir, 'native', 'authority.sqlite');
  const fd = openSync(db, 'r+');
  try {
    writeSync(fd, Buffer.from('this is not a database!!'), 0, 24, 0);
  } finally {
    closeSync(fd);
  }
  const { report } = await doctor(testHome(t), ['--data-dir', dataDir]);
  assert.match(findingOf(report, 'store', 'STORE_CORRUPT').message, /not a SQLite database/);
});

test('an older schema is STORE_SCHEMA_OLD, and a journal from a newer build STORE_SCHEMA_UNSUPPORTED', async (t) => {
  const { dataDir } = makeStore(t);
  const authority = new Database(join(dataDir, 'native', 'authority.sqlite'));
  authority.pragma(`user_version = ${AUTHORITY_MIGRATIONS.length - 1}`);
  authority.close();
  const journal = new Database(join(dataDir, 'skill-workflows', 'state.sqlite'));
  journal.pragma('user_version = 999');
  journal.close();
  const { report } = await doctor(testHome(t), ['--data-dir', dataDir]);
  assert.match(findingOf(report, 'store', 'STORE_SCHEMA_OLD').fix ?? '', /writing agentscm command of this build/);
  assert.match(findingOf(report, 'store.journal', 'STORE_SCHEMA_UNSUPPORTED').message, /schema version 999/);
});

test('store directories that group or others can enter are a warning with the chmod fix; a warning does not fail', async (t) => {
  const { dataDir } = makeStore(t);
  const native = join(dataDir, 'native');
  chmodSync(native, 0o755);
  const { report } = await doctor(testHome(t), ['--data-dir', dataDir]);
  const open = findingOf(report, 'store.permissions', 'STORE_PERMISSIONS_OPEN');
  assert.equal(open.status, 'warn');
  assert.equal(open.fix, `run: chmod 700 ${native}`);
  assert.equal(report.ok, true);
});
