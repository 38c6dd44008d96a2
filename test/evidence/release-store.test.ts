/**
 * A data directory written by the release before imported transfers and v2 receipts moved from
 * the journal to the authority (test/support/fixtures/README.md), migrated forward: a read opens
 * nothing for writing and is refused until a writing open migrates; then every transfer, receipt
 * and landing still reads, and `receipt export` writes the release's bytes exactly
 * (docs/native-store.md "Collector evidence").
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import { copyJournalEvidence } from '../../src/native/migrations/011-collector-evidence.js';
import { AUTHORITY_MIGRATIONS } from '../../src/native/migrations/index.js';
import { nativePaths, openAuthority } from '../../src/native/store.js';
import { withStore } from '../../src/tasks/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const FIXTURE = join(import.meta.dirname, '..', 'support', 'fixtures', 'release-store.tar.gz');

interface Expected {
  readonly upload_request_id: string;
  readonly attempt_id: string;
  readonly receipt_digest: string;
  readonly revision: string;
  readonly receipt_show: unknown;
  readonly landing: { readonly landing_id?: string };
}

interface Release {
  readonly dir: string;
  readonly dataDir: string;
  readonly expected: Expected;
}

function unpack(t: TestContext): Release {
  const dir = tempDir(t);
  execFileSync('tar', ['-xzf', FIXTURE, '-C', dir]);
  const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Expected;
  return { dir, dataDir: join(dir, 'data'), expected };
}

function query<T>(path: string, sql: string): T[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

function versionOf(path: string): number {
  return (query<{ user_version: number }>(path, 'PRAGMA user_version')[0] as { user_version: number }).user_version;
}

const JOURNAL = (dataDir: string): string => join(dataDir, 'skill-workflows', 'state.sqlite');
const TRANSFERS =
  'SELECT upload_request_id, attempt_id, task_id, transfer_digest, length, envelope, outcome, response, ' +
  'imported_at_ms, seq FROM collector_transfers ORDER BY seq';
const RECEIPTS =
  'SELECT rowid AS row, receipt_digest, repository, profile, target, change_id, context_digest, plan_digest, ' +
  'receipt, created_at_ms FROM collector_receipts ORDER BY rowid';

test('a release store: a read is refused and migrates nothing; a writing open copies every transfer and receipt byte for byte', async (t) => {
  const r = unpack(t);
  const authority = nativePaths(r.dataDir).db;
  assert.equal(versionOf(authority), 10, 'the fixture is a store of authority step 010');
  const shown = await runCli(['--data-dir', r.dataDir, 'receipt', 'show', r.expected.receipt_digest, '--json']);
  assert.notEqual(shown.code, 0, 'a read of a store not yet migrated is refused');
  assert.match(shown.stderr, /STORE_SCHEMA_UNSUPPORTED/);
  assert.equal(versionOf(authority), 10, 'a read never migrates');

  openAuthority(r.dataDir, { mode: 'write' }).close();
  assert.equal(versionOf(authority), AUTHORITY_MIGRATIONS.length);
  const legacyTransfers = query(JOURNAL(r.dataDir), TRANSFERS);
  const legacyReceipts = query(JOURNAL(r.dataDir), RECEIPTS);
  assert.equal(legacyTransfers.length, 1);
  assert.equal(legacyReceipts.length, 1);
  assert.deepEqual(query(authority, TRANSFERS), legacyTransfers, 'every transfer row, its envelope bytes included');
  assert.deepEqual(query(authority, RECEIPTS), legacyReceipts, 'every receipt row, at its rowid (the cursor)');
  const envelope = query<{ envelope: Buffer }>(authority, 'SELECT envelope FROM collector_transfers')[0]?.envelope;
  assert.ok(envelope?.equals(readFileSync(join(r.dir, 'envelope.bin'))), 'the original signed bytes');

  // The copy is idempotent: run again (as after a crash before the journal was ever touched), nothing doubles.
  const auth = openAuthority(r.dataDir, { mode: 'write' });
  try {
    copyJournalEvidence(auth.db);
  } finally {
    auth.close();
  }
  assert.deepEqual(query(authority, TRANSFERS), legacyTransfers);
  assert.deepEqual(query(authority, RECEIPTS), legacyReceipts);
});

test('a migrated release store: receipt show, export (the same bytes), verify, qualification and the landing still read', async (t) => {
  const r = unpack(t);
  // A writing command migrates what it opens: the authority and the workflow journal.
  withStore(r.dataDir, 'write', (store) => {
    store.authority();
    store.journal();
  });
  const cli = (args: readonly string[]) => runCli(['--data-dir', r.dataDir, ...args]);

  const shown = await cli(['receipt', 'show', r.expected.receipt_digest, '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual(jsonOf(shown), r.expected.receipt_show);

  const out = join(r.dir, 'again.agscmrb');
  const exported = await cli(['receipt', 'export', r.expected.receipt_digest, '--out', out, '--json']);
  assert.equal(exported.code, 0, exported.stderr);
  assert.ok(readFileSync(out).equals(readFileSync(join(r.dir, 'receipt.agscmrb'))), 'the export is byte-identical');
  const verified = await runCli(['receipt', 'verify', out, '--allow-unpinned', '--json']);
  assert.equal(verified.code, 0, verified.stderr);

  const targets = jsonOf<{ targets: { name: string; revision: string }[] }>(await cli(['target', 'list', '--json']));
  assert.deepEqual(
    targets.targets.map((target) => [target.name, target.revision]),
    [['main', r.expected.revision]],
    'the landing still holds',
  );
  const landings = query<{ n: number }>(nativePaths(r.dataDir).db, 'SELECT count(*) AS n FROM landings');
  assert.equal(landings[0]?.n, 1);
});
