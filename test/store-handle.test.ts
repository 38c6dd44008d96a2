/**
 * The one Store handle (issue #26 item 2): its behaviour (lazy, read mode read-only and never
 * creating, close idempotent) and the rule that only composition roots open databases — no
 * module below a root calls openAuthority/openJournal/openNativeStore/openStore or takes a
 * `dataDir: string` parameter, and only src/native/ imports 'better-sqlite3'.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import test from 'node:test';

import { AgentscmError } from '../src/contracts/errors.js';
import { journalPaths } from '../src/native/journal-db.js';
import { createAuthority, nativePaths } from '../src/native/store.js';
import { openStore } from '../src/tasks/store.js';
import { REPO_ROOT } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentscmError) return error.code;
    throw error;
  }
  throw new Error('expected an AgentscmError');
}

test('a store opens nothing until first use and never creates anything in read mode', (t) => {
  const dir = join(tempDir(t), 'data');
  const store = openStore(dir, { mode: 'read' });
  assert.equal(store.dataDir, resolve(dir));
  assert.equal(store.mode, 'read');
  assert.equal(
    codeOf(() => store.authority()),
    'STORE_NOT_INITIALIZED',
  );
  assert.equal(store.journal(), null);
  assert.equal(
    codeOf(() => store.requireJournal()),
    'WORKFLOW_JOURNAL_NOT_INITIALIZED',
  );
  assert.equal(
    codeOf(() => store.journal(true)),
    'INTERNAL',
  );
  store.close();
  assert.equal(existsSync(dir), false);
});

test('a read store opens the authority and an existing journal read-only', (t) => {
  const dir = tempDir(t);
  createAuthority(dir).close();
  const writer = openStore(dir, { mode: 'write' });
  writer.journal(true);
  writer.close();
  const store = openStore(dir, { mode: 'read' });
  try {
    assert.equal(store.authority().mode, 'read');
    assert.equal(store.authority().db.readonly, true);
    assert.equal(store.journal()?.mode, 'read');
    assert.equal(store.requireJournal().db.readonly, true);
  } finally {
    store.close();
  }
});

test('a write store creates the journal only when asked, reuses its connections, closes idempotently', (t) => {
  const dir = tempDir(t);
  createAuthority(dir).close();
  const store = openStore(dir, { mode: 'write' });
  const authority = store.authority();
  assert.equal(authority.mode, 'write');
  assert.equal(store.authority(), authority);
  assert.equal(store.journal(), null);
  assert.equal(
    codeOf(() => store.requireJournal()),
    'WORKFLOW_JOURNAL_NOT_INITIALIZED',
  );
  assert.equal(existsSync(journalPaths(dir).dir), false);
  const journal = store.journal(true);
  assert.ok(journal !== null);
  assert.equal(journal.mode, 'write');
  assert.equal(existsSync(journalPaths(dir).db), true);
  assert.equal(store.journal(), journal);
  assert.equal(store.requireJournal(), journal);
  store.close();
  store.close();
  assert.equal(authority.db.open, false);
  assert.equal(journal.db.open, false);
  assert.equal(existsSync(nativePaths(dir).lock), true);
});

const SRC = join(REPO_ROOT, 'src');

/** The composition roots: the only modules that open the store. */
const ROOTS = new Set([
  'src/hub/server.ts',
  'src/hub/task-worker.ts',
  'src/doctor/doctor.ts',
  'src/tasks/store.ts',
  'src/native/store-handle.ts',
  'src/native/store.ts',
  'src/native/journal-db.ts',
]);

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** The source without comments (a comment may name an opener or a parameter). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const OPENS_STORE = /\b(?:openAuthority|openAuthorityReadStore|openJournal|openNativeStore|openStore|withStore)\(/;
/** A parameter (or an inline parameter object type) `dataDir: string`, not an interface field. */
const DATA_DIR_PARAMETER = /[(,{]\s*dataDir\??\s*:\s*string\s*[,)=}]/;

function isRoot(path: string): boolean {
  return path.startsWith('src/commands/') || ROOTS.has(path);
}

function offenders(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of listTs(SRC)) {
    const path = relative(REPO_ROOT, file);
    if (isRoot(path)) continue;
    const text = code(readFileSync(file, 'utf8'));
    const why: string[] = [];
    if (OPENS_STORE.test(text)) why.push('opens the store');
    if (DATA_DIR_PARAMETER.test(text)) why.push('takes dataDir: string');
    if (why.length > 0) found.set(path, why);
  }
  return found;
}

test('only composition roots open the store or take a data directory', () => {
  // The patterns catch what they are for (so an empty answer below means something).
  assert.ok(OPENS_STORE.test(code('const s = withStore(dir, "read", f);')));
  assert.ok(!OPENS_STORE.test(code('// withStore(dir) in a comment')));
  assert.ok(DATA_DIR_PARAMETER.test('export function f(auth: Authority, dataDir: string) {'));
  assert.ok(!DATA_DIR_PARAMETER.test('interface X {\n  readonly dataDir: string;\n}'));
  const unexpected = [...offenders()].map(([p, why]) => `${p}: ${why.join(', ')}`);
  assert.deepEqual(unexpected, [], 'take a Store (src/native/store-handle.ts) from the root instead');
});

test("only src/native/ imports 'better-sqlite3'", () => {
  const importers = listTs(SRC)
    .map((file) => relative(REPO_ROOT, file))
    .filter((path) => !path.startsWith('src/native/'))
    .filter((path) =>
      /\bfrom\s+['"]better-sqlite3['"]|import\(\s*['"]better-sqlite3['"]/.test(
        readFileSync(join(REPO_ROOT, path), 'utf8'),
      ),
    );
  assert.deepEqual(importers, [], 'use SqliteDatabase / Statement from src/native/sqlite.ts');
});
