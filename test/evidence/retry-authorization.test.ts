/**
 * The exact upload retry after the combined caller/origin authorization (docs/collector-transfer.md
 * "Import", step 2: an exact committed upload retry is looked up after the current combined
 * caller/origin authorization and before compilation or replay, and answers the historical
 * retained view with its applicability reported beside it). `agentscm agent-task upload` is
 * spawned as a user runs it, against a real store with real grants, a real enrolled key and a
 * signed envelope:
 * - another agent's grant, live or not, never receives someone else's retained upload
 *   (IMPORT_ORIGIN_MISMATCH, exit 2), before or after the origin's grant is revoked;
 * - a revoked or rotated-away token is refused before anything is looked up (GRANT_TOKEN_REJECTED);
 * - the originating actor, calling under a live grant while the claim's own grant is revoked or
 *   rotated, gets the historical view with `currently_applicable: false` and
 *   `applicability.origin_current: false` — what `qualification` says too (authorization_changed).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { rotateGrant } from '../../src/native/grants.js';
import { openAuthority } from '../../src/native/store.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { withStore } from '../../src/tasks/store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import {
  ALICE,
  authorization,
  claim,
  envelopeOf,
  makeEvidence,
  transferParts,
  type Evidence,
} from '../support/evidence.js';
import { makeGrant } from '../support/grants.js';
import { CHANGE_ID } from '../support/tasks.js';

const BOB: AgentRef = { owner_id: 'bob', agent_id: 'agent-2' };

interface UploadJson {
  transfer_digest: string;
  upload: { target: string; answer: JsonObject };
}

function upload(ev: Evidence, file: string, tokenFile: string): ReturnType<typeof runCli> {
  return runCli(['--data-dir', ev.store.dataDir, 'agent-task', 'upload', file, '--token-file', tokenFile, '--json']);
}

function assertRefused(result: Awaited<ReturnType<typeof runCli>>, code: string, exit: number, what: string): void {
  assert.equal(result.code, exit, `${what}: ${result.stdout}${result.stderr}`);
  assert.match(result.stderr, new RegExp(`^error\\[${code}\\]`), what);
  assert.doesNotMatch(result.stdout, /retained|transfer_digest/, `${what}: nothing of the retained upload is shown`);
}

test(
  "another agent's exact retry is refused before and after the origin's grant is revoked; " +
    'the origin actor under a live grant gets the retained view, not applicable, as qualification says',
  { timeout: 240_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const bobToken = makeGrant(ev.store.dataDir, ev.dir, BOB).token_file;
    const descriptor = claim(ev);
    const file = join(ev.dir, 'envelope.agscmtr');
    writeFileSync(file, envelopeOf(ev.key, transferParts(descriptor)));

    const first = await upload(ev, file, ev.tokenFile);
    assert.equal(first.code, 0, first.stderr);
    const imported = jsonOf<UploadJson>(first).upload.answer;
    assert.equal(imported.status, 'imported');

    // While the origin is live: another agent's grant is not authorized for alice's upload.
    assertRefused(
      await upload(ev, file, bobToken),
      'IMPORT_ORIGIN_MISMATCH',
      2,
      "bob's retry while alice's grant is live",
    );

    // The origin's grant is revoked (alice keeps a second, live grant).
    const aliceLater = makeGrant(ev.store.dataDir, ev.dir, ALICE).token_file;
    const revoked = await runCli(['--data-dir', ev.store.dataDir, 'grant', 'revoke', ev.grantId, '--json']);
    assert.equal(revoked.code, 0, revoked.stderr);

    // The reproducer: before, this answered retained, currently_applicable true, exit 0.
    assertRefused(
      await upload(ev, file, bobToken),
      'IMPORT_ORIGIN_MISMATCH',
      2,
      "bob's retry after alice's grant was revoked",
    );
    // The caller's own authorization comes first: the revoked token itself is refused.
    assertRefused(await upload(ev, file, ev.tokenFile), 'GRANT_TOKEN_REJECTED', 2, "the revoked grant's own token");

    // The originating actor under a live grant: the historical view, with the origin's live state beside it.
    const late = await upload(ev, file, aliceLater);
    assert.equal(late.code, 0, late.stderr);
    const retained = jsonOf<UploadJson>(late).upload.answer;
    assert.equal(retained.status, 'retained');
    assert.equal(retained.transfer_digest, imported.transfer_digest);
    assert.equal(retained.outcome, 'passed');
    assert.equal(retained.currently_applicable, false);
    assert.deepEqual(retained.applicability, {
      subject_current: true,
      registration_current: true,
      origin_current: false,
    });

    // qualification agrees: the transfer no longer counts because its origin's authorization changed.
    const qualification = await runCli([
      '--data-dir',
      ev.store.dataDir,
      'qualification',
      '--change',
      CHANGE_ID,
      '--json',
    ]);
    assert.equal(qualification.code, 1, qualification.stderr);
    const answer = jsonOf<{ qualified: boolean; failures: { task_id: string; code: string }[] }>(qualification);
    assert.equal(answer.qualified, false);
    assert.deepEqual(answer.failures, [{ task_id: descriptor.task.task_id, code: 'authorization_changed' }]);
  },
);

test(
  'a rotated origin grant: the old token is refused, the rotated one gets the retained view with ' +
    'origin_current false; another repository-mate still gets nothing',
  (t) => {
    const ev = makeEvidence(t);
    const bobToken = makeGrant(ev.store.dataDir, ev.dir, BOB).token_file;
    const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
    const first = withStore(ev.store.dataDir, 'write', (held) =>
      importCollectorTransfer(held, envelope, authorization(ev)),
    );
    assert.equal(first.status, 'imported');
    const live = withStore(ev.store.dataDir, 'write', (held) =>
      importCollectorTransfer(held, envelope, authorization(ev)),
    );
    assert.equal(live.status, 'retained');
    assert.equal(live.currently_applicable, true);
    assert.deepEqual((live as JsonObject).applicability, {
      subject_current: true,
      registration_current: true,
      origin_current: true,
    });

    const rotatedToken = join(ev.dir, 'rotated.token');
    const auth = openAuthority(ev.store.dataDir, { mode: 'write' });
    try {
      rotateGrant(auth, ev.grantId, rotatedToken, Date.now());
    } finally {
      auth.close();
    }
    assert.equal(
      codeOf(() => authorization(ev)),
      'GRANT_TOKEN_REJECTED',
    );
    const rotated = withStore(ev.store.dataDir, 'write', (held) =>
      importCollectorTransfer(held, envelope, authorization(ev, rotatedToken)),
    );
    assert.equal(rotated.status, 'retained');
    assert.equal(rotated.currently_applicable, false);
    assert.deepEqual(rotated.applicability, {
      subject_current: true,
      registration_current: true,
      origin_current: false,
    });
    assert.equal(
      codeOf(() =>
        withStore(ev.store.dataDir, 'write', (held) =>
          importCollectorTransfer(held, envelope, authorization(ev, bobToken)),
        ),
      ),
      'IMPORT_ORIGIN_MISMATCH',
    );
  },
);
