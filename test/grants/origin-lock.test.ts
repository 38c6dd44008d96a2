/**
 * The one lock of the live origin guard on the evidence path (docs/grants.md "One lock for every
 * origin"): an import holds the authority's writer reservation from its origin-grant recheck to
 * its journal commit, so a `grant revoke` started meanwhile waits for it; a revocation committed
 * before the import's reservation refuses the import (IMPORT_ORIGIN_NOT_LIVE) with nothing
 * retained. Either way the subject never qualifies afterwards (authorization_changed).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { openAuthority } from '../../src/native/store.js';
import { qualifyLocal } from '../../src/tasks/admission/qualification-local.js';
import { withStore } from '../../src/tasks/store.js';
import { cliEntryArgv, runCli } from '../helpers/cli.js';
import { claim, envelopeOf, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { CHANGE_ID, PROFILE } from '../support/tasks.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** The operator's own read (the agent's token is revoked by then). */
function qualifyAs(ev: Evidence): ReturnType<typeof qualifyLocal> {
  return withStore(ev.store.dataDir, 'read', (store) =>
    qualifyLocal(store, { profile: PROFILE, target: 'main', change: CHANGE_ID, context: ev.store.contextDigest }),
  );
}

function transfers(ev: Evidence): number {
  const journal = openAuthority(ev.store.dataDir, { mode: 'read' });
  try {
    return (journal.db.prepare('SELECT count(*) AS n FROM collector_transfers').get() as { n: number }).n;
  } finally {
    journal.close();
  }
}

interface Child {
  readonly exit: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

function importChild(ev: Evidence, envelope: Buffer, pauseAt: string, resumeFile: string): Child {
  const file = join(ev.dir, `transfer-${pauseAt.replace(/[^a-z]/g, '')}.bin`);
  writeFileSync(file, envelope);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join('test', 'evidence', 'import-child.ts'), ev.store.dataDir, file, ev.tokenFile],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: pauseAt, AGENTSCM_TEST_PAUSE_RESUME_FILE: resumeFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    exit: new Promise((resolve) => child.on('close', (code) => resolve(code))),
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

async function until(what: string, check: () => boolean, detail: () => string): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > 30_000) throw new Error(`timed out waiting for ${what}: ${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test(
  'a revocation started while an import holds its reservation waits for the import to commit; the subject then does not qualify',
  { timeout: 90_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
    const resume = join(ev.dir, 'resume');
    const child = importChild(ev, envelope, 'task:in-native-reservation', resume);
    await until(
      'the import to hold its reservation',
      () => child.stderr().includes('agentscm-test-paused:task:in-native-reservation'),
      () => child.stderr(),
    );

    const revoke = spawn(
      process.execPath,
      [...cliEntryArgv(), '--data-dir', ev.store.dataDir, 'grant', 'revoke', ev.grantId, '--json'],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let revokeOut = '';
    revoke.stdout.on('data', (chunk: Buffer) => (revokeOut += chunk.toString()));
    revoke.stderr.on('data', (chunk: Buffer) => (revokeOut += chunk.toString()));
    let revoked = false;
    const revokeExit = new Promise<number | null>((resolve) =>
      revoke.on('close', (code) => {
        revoked = true;
        resolve(code);
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.equal(revoked, false, `the revocation waits for the import's reservation: ${revokeOut}`);
    assert.equal(transfers(ev), 0);

    writeFileSync(resume, '');
    assert.equal(await child.exit, 0, child.stderr());
    assert.equal((JSON.parse(child.stdout()) as { status: string }).status, 'imported');
    assert.equal(await revokeExit, 0);
    assert.equal(transfers(ev), 1, 'the import committed before the revocation');

    const answer = qualifyAs(ev);
    assert.equal(answer.qualified, false);
    assert.ok(
      answer.failures.some((failure) => failure.code === 'authorization_changed'),
      JSON.stringify(answer.failures),
    );
  },
);

test(
  'a revocation committed before the import takes its reservation refuses the import and retains nothing',
  { timeout: 90_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
    const resume = join(ev.dir, 'resume');
    const child = importChild(ev, envelope, 'task:before-native-reservation', resume);
    await until(
      'the import to pause before its reservation',
      () => child.stderr().includes('agentscm-test-paused:task:before-native-reservation'),
      () => child.stderr(),
    );
    const revoked = await runCli(['--data-dir', ev.store.dataDir, 'grant', 'revoke', ev.grantId, '--json']);
    assert.equal(revoked.code, 0, revoked.stderr);
    writeFileSync(resume, '');
    assert.notEqual(await child.exit, 0, 'the import is refused');
    assert.equal(transfers(ev), 0, 'nothing retained');
    assert.match(child.stderr(), /IMPORT_ORIGIN_NOT_LIVE|GRANT_NOT_LIVE/);
    assert.equal(qualifyAs(ev).qualified, false);
  },
);
