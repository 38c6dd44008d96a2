/**
 * qualification is read-only (docs/qualification.md "Read-only"): the store's files are
 * byte-identical after it, a fresh store gets no journal, and the operator command
 * `agentscm qualification` prints the same answer and exits 0 only when qualified.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'node:test';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { qualificationAnswerDecoder } from '../../src/contracts/task/qualification.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { importEnvelope, qualifyAs } from '../support/admission.js';
import { claim, envelopeOf, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { CHANGE_ID, sha256 } from '../support/tasks.js';

/**
 * Every file under the data directory with the SHA-256 of its bytes. SQLite's -shm index is left
 * out, and so is an empty -wal: a reader of a WAL database may recreate both sidecars (the spec
 * allows that), never change a database or a lock file.
 */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!name.endsWith('-shm') && !(name.endsWith('-wal') && statSync(path).size === 0))
        out[relative(dir, path)] = sha256(readFileSync(path));
    }
  };
  walk(dir);
  return out;
}

function passedImport(ev: Evidence): void {
  importEnvelope(ev, envelopeOf(ev.key, transferParts(claim(ev))));
}

test('on a store with no journal qualification creates none and changes no byte of the authority', (t) => {
  const ev = makeEvidence(t);
  assert.equal(existsSync(journalPaths(ev.store.dataDir).db), false);
  const before = filesOf(ev.store.dataDir);
  const answer = qualifyAs(ev);
  assert.equal(answer.qualified, false);
  assert.equal(existsSync(journalPaths(ev.store.dataDir).db), false, 'no journal was created');
  assert.deepEqual(filesOf(ev.store.dataDir), before);
});

test('on a store with a retained receipt qualification changes no byte of the authority or the journal', (t) => {
  const ev = makeEvidence(t);
  passedImport(ev);
  const before = filesOf(ev.store.dataDir);
  assert.ok(
    Object.keys(before).some((path) => path.includes('state.sqlite')),
    'the journal exists',
  );
  assert.equal(qualifyAs(ev).qualified, true);
  assert.equal(qualifyAs(ev, { now: Date.now() + 10 * 3_600_000 }).qualified, true);
  assert.deepEqual(filesOf(ev.store.dataDir), before);
});

test('agentscm qualification: exit 1 with the answer when not qualified, exit 0 when qualified; --context defaults to the only context of the current version', async (t) => {
  const ev = makeEvidence(t);
  const pending = await runCli(['--data-dir', ev.store.dataDir, 'qualification', '--change', CHANGE_ID, '--json']);
  assert.equal(pending.code, 1, pending.stderr);
  const unqualified = qualificationAnswerDecoder.validate(jsonOf<JsonObject>(pending));
  assert.equal(unqualified.qualified, false);
  assert.equal(unqualified.next.operation, 'collector_claim');

  passedImport(ev);
  const before = filesOf(ev.store.dataDir);
  const qualified = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'qualification',
    '--change',
    CHANGE_ID,
    '--context',
    ev.store.contextDigest,
    '--json',
  ]);
  assert.equal(qualified.code, 0, qualified.stderr);
  const answer = qualificationAnswerDecoder.validate(jsonOf<JsonObject>(qualified));
  assert.deepEqual(answer, qualifyAs(ev));
  assert.equal(answer.qualified, true);
  assert.deepEqual(filesOf(ev.store.dataDir), before, 'the command changed nothing');

  const human = await runCli(['--data-dir', ev.store.dataDir, 'qualification', '--change', CHANGE_ID]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^qualified: Change change-1 at revision [0-9a-f]{64}\n/);
  assert.match(human.stdout, new RegExp(`receipt ${answer.receipt_digest ?? 'none'}`));
  assert.match(human.stdout, /next none/);
});

test('agentscm qualification refuses bad input with a typed error and creates nothing: an unknown Change, an unknown context, a missing store', async (t) => {
  const ev = makeEvidence(t);
  const before = filesOf(ev.store.dataDir);
  const unknownChange = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'qualification',
    '--change',
    'no-such-change',
    '--json',
  ]);
  assert.equal(unknownChange.code, 2);
  assert.equal((jsonOf(unknownChange).error as { code: string }).code, 'CHANGE_NOT_FOUND');
  const unknownContext = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'qualification',
    '--change',
    CHANGE_ID,
    '--context',
    'f'.repeat(64),
    '--json',
  ]);
  assert.equal(unknownContext.code, 2);
  assert.equal((jsonOf(unknownContext).error as { code: string }).code, 'CONTEXT_NOT_FOUND');
  assert.deepEqual(filesOf(ev.store.dataDir), before);

  const missing = join(ev.dir, 'no-store');
  const absent = await runCli(['--data-dir', missing, 'qualification', '--change', CHANGE_ID, '--json']);
  assert.equal(absent.code, 4);
  assert.equal((jsonOf(absent).error as { code: string }).code, 'STORE_NOT_INITIALIZED');
  assert.equal(existsSync(missing), false, 'no store was created');
});

test('agentscm agent-task call qualification answers as the grant of --token-file, takes no input document and changes nothing', async (t) => {
  const ev = makeEvidence(t);
  passedImport(ev);
  const before = filesOf(ev.store.dataDir);
  const called = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'agent-task',
    'call',
    'qualification',
    '--token-file',
    ev.tokenFile,
    '--change',
    CHANGE_ID,
    '--context',
    ev.store.contextDigest,
    '--json',
  ]);
  assert.equal(called.code, 0, called.stderr);
  assert.deepEqual(qualificationAnswerDecoder.validate(jsonOf<JsonObject>(called)), qualifyAs(ev));
  assert.deepEqual(filesOf(ev.store.dataDir), before);
  const withInput = await runCli(
    [
      '--data-dir',
      ev.store.dataDir,
      'agent-task',
      'call',
      'qualification',
      '--token-file',
      ev.tokenFile,
      '--change',
      CHANGE_ID,
      '--context',
      ev.store.contextDigest,
      '--input',
      '-',
      '--json',
    ],
    { input: '{}' },
  );
  assert.equal(withInput.code, 2);
  assert.equal((jsonOf(withInput).error as { code: string }).code, 'USAGE');
});
