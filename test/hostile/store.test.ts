/**
 * Reproducers for the native store under damage and concurrency (docs/native-store.md
 * "Damaged and unreadable databases", "Blobs"): a truncated, foreign, malformed, schema-less or
 * missing authority of an initialized store is STORE_CORRUPT and is never re-initialized; a
 * store this user cannot write is DATABASE_ACCESS_DENIED; every database (authority, journal,
 * workspace) gets those codes, including a SQLite error that reaches the CLI's error handler;
 * two workspaces of one store storing the same large contents at once both succeed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { toAgentscmError } from '../../src/commands/_base.js';
import { createSha256 } from '../../src/crypto/sha256.js';
import { BLOB_CHUNK_BYTES, hasBlob, putChunkedBlob } from '../../src/native/blobs.js';
import { createAuthority, openAuthority, writeTransaction } from '../../src/native/store.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { assertError, cliJson, fixture, initProject, integrityOk, type Fixture } from '../support/foundation.js';

function authorityPath(dataDir: string): string {
  return join(dataDir, 'native', 'authority.sqlite');
}

/** Remove the -wal/-shm sidecars a closed store may still have, so the main file is all there is. */
function dropSidecars(db: string): void {
  rmSync(`${db}-wal`, { force: true });
  rmSync(`${db}-shm`, { force: true });
}

/** A read, a write and a store-creating command against the store of `f`, each with its own workspace edits. */
function everyCommand(f: Fixture, other: string): readonly (readonly string[])[] {
  return [
    ['policy', 'show'],
    ['policy', 'bump'],
    ['checkpoint', '--change', 'c1', '--workspace', f.workspace],
    ['init-repo', other, '--name', 'second'],
  ];
}

async function expectDamaged(f: Fixture, other: string, unchanged: () => void): Promise<void> {
  for (const args of everyCommand(f, other)) {
    const result = await runCli(['--data-dir', f.dataDir, ...args, '--json']);
    assertError(result, 'STORE_CORRUPT', 4);
    assert.equal(result.stderr.split('\n').length, 2, `${args.join(' ')} prints one line: ${result.stderr}`);
    unchanged();
  }
  assert.equal(existsSync(join(other, '.agentscm')), false, 'init-repo of another directory bound nothing');
}

async function damagedStore(t: test.TestContext): Promise<{ f: Fixture; other: string; db: string }> {
  const f = fixture(t);
  await initProject(f);
  const other = join(f.root, 'other');
  mkdirSync(other);
  writeFileSync(join(other, 'x.txt'), 'x\n');
  const db = authorityPath(f.dataDir);
  dropSidecars(db);
  return { f, other, db };
}

test('an authority truncated to zero bytes is STORE_CORRUPT for every command and is never re-initialized', async (t) => {
  const { f, other, db } = await damagedStore(t);
  writeFileSync(db, '');
  await expectDamaged(f, other, () =>
    assert.equal(statSync(db).size, 0, 'still empty: no fresh schema was written into it'),
  );
});

test('an authority whose header is not SQLite is STORE_CORRUPT (not USAGE) and left as it is', async (t) => {
  const { f, other, db } = await damagedStore(t);
  const garbage = Buffer.from('this is not a database, whatever its name says. '.repeat(100));
  writeFileSync(db, garbage);
  await expectDamaged(f, other, () => assert.deepEqual(readFileSync(db), garbage));
});

test('a malformed authority image (valid header, damaged pages) is STORE_CORRUPT, not INTERNAL', async (t) => {
  const { f, other, db } = await damagedStore(t);
  const bytes = readFileSync(db);
  const pageSize = bytes.readUInt16BE(16);
  bytes.fill(0xa5, pageSize);
  writeFileSync(db, bytes);
  await expectDamaged(f, other, () => assert.deepEqual(readFileSync(db), bytes));
});

test('an authority replaced by an empty SQLite database while the lock file exists is STORE_CORRUPT, not a fresh store', async (t) => {
  const { f, other, db } = await damagedStore(t);
  rmSync(db);
  new Database(db).close();
  const before = readFileSync(db);
  await expectDamaged(f, other, () => assert.deepEqual(readFileSync(db), before));
});

test('a lock file without its authority is STORE_CORRUPT: the store is not created again', async (t) => {
  const { f, other, db } = await damagedStore(t);
  rmSync(db);
  await expectDamaged(f, other, () => assert.equal(existsSync(db), false));
});

test('the library refuses a damaged store too: createAuthority never re-initializes an initialized store', async (t) => {
  const { f, db } = await damagedStore(t);
  writeFileSync(db, '');
  assert.equal(
    codeOf(() => createAuthority(f.dataDir).close()),
    'STORE_CORRUPT',
  );
  assert.equal(
    codeOf(() => openAuthority(f.dataDir, { mode: 'write' }).close()),
    'STORE_CORRUPT',
  );
  assert.equal(
    codeOf(() => openAuthority(f.dataDir, { mode: 'read' }).close()),
    'STORE_CORRUPT',
  );
  assert.equal(statSync(db).size, 0);
});

test('a damaged workspace database and a damaged workflow journal are STORE_CORRUPT (not USAGE)', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const state = join(f.workspace, '.agentscm', 'workspace.sqlite');
  dropSidecars(state);
  const garbage = Buffer.from('x'.repeat(4096));
  writeFileSync(state, garbage);
  for (const args of [
    ['status', '--workspace', f.workspace],
    ['checkpoint', '--change', 'c1', '--workspace', f.workspace],
  ]) {
    assertError(await runCli(['--data-dir', f.dataDir, ...args, '--json']), 'STORE_CORRUPT', 4);
    assert.deepEqual(readFileSync(state), garbage);
  }
  const journal = join(f.dataDir, 'skill-workflows', 'state.sqlite');
  mkdirSync(join(f.dataDir, 'skill-workflows'), { recursive: true });
  writeFileSync(journal, garbage);
  assertError(
    await runCli(['--data-dir', f.dataDir, 'skill-workflow', 'status', 'run-1', '--json']),
    'STORE_CORRUPT',
    4,
  );
  assert.deepEqual(readFileSync(journal), garbage);
});

test('a SQLite error that reaches the CLI error handler gets its documented code, never USAGE or INTERNAL', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'garbage.sqlite');
  writeFileSync(path, 'x'.repeat(4096));
  let raw: unknown;
  try {
    new Database(path, { readonly: true }).pragma('user_version');
  } catch (error) {
    raw = error;
  }
  assert.ok(raw instanceof Error && /not a database/.test(raw.message), 'SQLite raised its own error');
  const mapped = toAgentscmError(raw);
  assert.equal(mapped.code, 'STORE_CORRUPT');
  assert.equal(mapped.cause, raw);
});

/** Spawn the CLI as another user (uid/gid 65534) when this test runs as root. */
function runAsOtherUser(args: readonly string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env))
      if (value !== undefined && key !== 'AGENTSCM_DATA_DIR') env[key] = value;
    const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
      cwd,
      env: { ...env, HOME: cwd },
      uid: 65534,
      gid: 65534,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({
        code,
        signal,
        stdout: stdoutBytes.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        stdoutBytes,
      });
    });
  });
}

test('a store another user can read but not write is DATABASE_ACCESS_DENIED for a read command, not INTERNAL', async (t) => {
  const f = fixture(t);
  await initProject(f);
  const native = join(f.dataDir, 'native');
  dropSidecars(authorityPath(f.dataDir));
  const before = readFileSync(authorityPath(f.dataDir));
  // Readable by everyone, writable by nobody but root: SQLite cannot create the -shm file it
  // needs to read a WAL database.
  for (const dir of [f.root, f.dataDir, native]) chmodSync(dir, 0o755);
  chmodSync(authorityPath(f.dataDir), 0o644);
  chmodSync(join(native, 'lock'), 0o644);
  let result: CliResult;
  if (process.getuid?.() === 0) {
    result = await runAsOtherUser(['--data-dir', f.dataDir, 'policy', 'show', '--json'], f.root);
  } else {
    chmodSync(native, 0o555);
    t.after(() => chmodSync(native, 0o755));
    result = await runCli(['--data-dir', f.dataDir, 'policy', 'show', '--json']);
  }
  assertError(result, 'DATABASE_ACCESS_DENIED', 4);
  assert.deepEqual(readFileSync(authorityPath(f.dataDir)), before);
  assert.equal(existsSync(`${authorityPath(f.dataDir)}-shm`), false);
});

test('storing a large blob that another connection stored since it was looked up keeps the stored one', (t) => {
  const dir = tempDir(t);
  const first = createAuthority(dir);
  t.after(() => first.close());
  const second = openAuthority(dir, { mode: 'write' });
  t.after(() => second.close());
  const content = Buffer.alloc(BLOB_CHUNK_BYTES + 10, 7);
  const digest = createSha256().update(content).digest('hex');
  const size = BigInt(content.byteLength);
  assert.equal(hasBlob(first, digest), false, 'the first writer looks it up and finds nothing');
  assert.equal(
    writeTransaction(second, () =>
      putChunkedBlob(second, digest, size, [content.subarray(0, BLOB_CHUNK_BYTES), content.subarray(BLOB_CHUNK_BYTES)]),
    ),
    true,
  );
  let consumed = false;
  const source = (function* () {
    consumed = true;
    yield content;
  })();
  assert.equal(
    writeTransaction(first, () => putChunkedBlob(first, digest, size, source)),
    false,
    'already stored: not new',
  );
  assert.equal(consumed, false, 'the source is not read for a blob that is stored');
  assert.equal(hasBlob(first, digest), true);
});

/** Start the CLI paused at `point`; `resume` lets it run on once it is there. */
function startPaused(
  point: string,
  args: readonly string[],
  resumeFile: string,
): { paused: Promise<void>; done: Promise<CliResult> } {
  const env: Record<string, string | undefined> = {
    ...process.env,
    AGENTSCM_TEST_PAUSE_AT: point,
    AGENTSCM_TEST_PAUSE_RESUME_FILE: resumeFile,
  };
  delete env.AGENTSCM_DATA_DIR;
  const child = spawn(process.execPath, [...cliEntryArgv(), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let stderr = '';
  let onPaused: () => void = () => undefined;
  const paused = new Promise<void>((resolve) => (onPaused = resolve));
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.includes(`agentscm-test-paused:${point}`)) onPaused();
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, signal, stdout: stdoutBytes.toString('utf8'), stderr, stdoutBytes });
    });
  });
  return {
    paused: Promise.race([paused, done.then((r) => Promise.reject(new Error(`ended before ${point}: ${r.stderr}`)))]),
    done,
  };
}

test('two workspaces of one store checkpointing the same 30 large files at once both succeed (no UNIQUE failure on blobs)', async (t) => {
  const f = fixture(t);
  await initProject(f, 'one');
  const second = join(f.root, 'second');
  mkdirSync(second);
  writeFileSync(join(second, 'README.md'), 'second\n');
  await cliJson(f, ['init-repo', second, '--name', 'two']);
  const content = Buffer.alloc(2 * 1024 * 1024);
  for (let i = 0; i < content.length; i += 4) content.writeUInt32LE((i * 2654435761) >>> 0, i);
  for (const root of [f.workspace, second]) {
    mkdirSync(join(root, 'large'));
    for (let i = 0; i < 30; i++) writeFileSync(join(root, 'large', `copy-${i}.bin`), content);
  }
  // Both are paused after their scans and resumed together, so that both look up the same
  // blobs before either stores them.
  const resume = join(f.root, 'resume');
  const runs = [f.workspace, second].map((root) =>
    startPaused(
      'checkpoint:after-scan',
      ['--data-dir', f.dataDir, 'checkpoint', '--change', 'big', '--workspace', root, '--json'],
      resume,
    ),
  );
  await Promise.all(runs.map((r) => r.paused));
  writeFileSync(resume, '');
  const results = await Promise.all(runs.map((r) => r.done));
  for (const result of results) {
    assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
    assert.equal(jsonOf<{ created: boolean }>(result).created, true);
  }
  integrityOk(f.dataDir);
  const db = new Database(authorityPath(f.dataDir), { readonly: true });
  t.after(() => db.close());
  const digest = createSha256().update(content).digest('hex');
  const row = db.prepare('SELECT chunk_count FROM blobs WHERE digest = ?').get(digest) as
    { chunk_count: number } | undefined;
  assert.equal(row?.chunk_count, 2, 'stored once, complete');
  for (const result of results) {
    const revision = jsonOf<{ revision: string; repository: string }>(result);
    const cat = await runCli([
      '--data-dir',
      f.dataDir,
      'revision',
      'cat',
      revision.revision,
      'large/copy-29.bin',
      '--repository',
      revision.repository,
    ]);
    assert.equal(cat.code, 0, cat.stderr);
    assert.ok(cat.stdoutBytes.equals(content));
  }
});
