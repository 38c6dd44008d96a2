/**
 * Human output reads as English and keeps nothing unlabelled: counts agree with their nouns
 * ("1 file", not "1 files"), `observation-digest` labels its two values, and every instant a
 * task call reports in Unix milliseconds (`*_at_ms`) is also shown as an ISO 8601 UTC time.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { instantLines, isoOfMs } from '../../src/commands/_times.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject, type JsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { assertionToJson, taskResultAssertionDecoder } from '../../src/contracts/task/result.js';
import { jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { makeEvidence } from '../support/evidence.js';
import { tokenFileFor } from '../support/grants.js';
import { claimRequest } from '../support/task-requests.js';
import { CHANGE_ID, makeTaskStore } from '../support/tasks.js';

test('init-repo and checkpoint of a one-file project say "1 file", and progress says "1 changed path"', async (t) => {
  const root = tempDir(t);
  const workspace = join(root, 'one');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'only.txt'), 'x');
  const data = join(root, 'data');
  const init = await runCli(['--data-dir', data, 'init-repo', workspace, '--name', 'one', '--no-instructions'], {
    env: { AGENTSCM_PROGRESS: '1' },
  });
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /\(1 file, 1 byte\)/);
  assert.doesNotMatch(init.stdout + init.stderr, /\b1 files\b|\b1 bytes\b/);
  assert.match(init.stderr, /^scanned 1 file \(1 byte\)/m);
  assert.match(init.stderr, /^stored 1 file; recording/m);

  writeFileSync(join(workspace, 'only.txt'), 'y');
  const checkpoint = await runCli(['--data-dir', data, 'checkpoint', '--change', 'c1', '--workspace', workspace], {
    env: { AGENTSCM_PROGRESS: '1' },
  });
  assert.equal(checkpoint.code, 0, checkpoint.stderr);
  assert.match(checkpoint.stdout, /1 of 1 file hashed/);
  assert.match(checkpoint.stderr, /hashed 1 of 1 file; 1 changed path; recording/);
  assert.doesNotMatch(checkpoint.stdout + checkpoint.stderr, /\b1 files\b|path\(s\)/);
});

test('observation-digest labels the digest and the length of the signing bytes', async (t) => {
  const golden = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'observation-golden-v1.json')), {
    maxBytes: 1 << 20,
  });
  assert.ok(isJsonObject(golden));
  const assertion = taskResultAssertionDecoder.validate(golden.assertion_unsigned ?? null);
  const file = join(tempDir(t), 'observation.json');
  writeFileSync(file, encodeCanonical(assertionToJson(assertion)));
  const human = await runCli(['agent-task', 'observation-digest', file]);
  assert.equal(human.code, 0, human.stderr);
  const digest = golden.digest as string;
  const length = golden.signing_bytes_length as bigint;
  assert.equal(human.stdout, `observation digest: ${digest}\nsigning bytes:      ${length} bytes\n`);
});

test('a claim in human output shows each *_at_ms instant as ISO 8601 beside the milliseconds; --json stays the bare document', async (t) => {
  const dir = tempDir(t);
  const store = makeTaskStore(dir);
  const alice = { owner_id: 'alice', agent_id: 'a1' };
  const token = tokenFileFor(dir, dir, alice);
  const base = ['--data-dir', dir, 'agent-task', 'call'];
  const subject = ['--change', CHANGE_ID, '--context', store.contextDigest];
  const next = jsonOf(await runCli([...base, 'next', '--token-file', token, ...subject, '--json']));
  const step = next.next as JsonObject;
  const claimFile = join(dir, 'claim.json');
  writeFileSync(
    claimFile,
    formatJson(
      claimRequest(
        alice,
        { task_id: step.task_id as string, task_digest: step.task_digest as string },
        'claim-1',
        'op-1',
        { leaseMs: 3_600_000n },
      ),
    ),
  );
  const human = await runCli([...base, 'claim', '--token-file', token, ...subject, '--input', claimFile]);
  assert.equal(human.code, 0, human.stderr);
  const match = /^(\S*lease_expires_at_ms) (\d+) \((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\)$/m.exec(human.stdout);
  assert.ok(match, `no ISO time beside lease_expires_at_ms in:\n${human.stdout}`);
  assert.equal(match[3], new Date(Number(match[2])).toISOString());
  const json = await runCli([...base, 'claim', '--token-file', token, ...subject, '--input', claimFile, '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.doesNotMatch(json.stdout, /\d{4}-\d\d-\d\dT/);
  assert.ok(isJsonObject(jsonOf(json)));
});

test('instantLines names every *_at_ms integer by its path, in document order, and only those', () => {
  const doc: JsonObject = {
    created_at_ms: 0n,
    lease_ms: 5n,
    attempt: { lease_expires_at_ms: 1_764_555_555_000n, note: 'x' },
    rows: [{ updated_at_ms: 86_400_000 }],
  };
  assert.deepEqual(instantLines(doc), [
    'created_at_ms 0 (1970-01-01T00:00:00.000Z)',
    'attempt.lease_expires_at_ms 1764555555000 (2025-12-01T02:19:15.000Z)',
    'rows[0].updated_at_ms 86400000 (1970-01-02T00:00:00.000Z)',
  ]);
  assert.equal(isoOfMs(18446744073709551615n), 'beyond the representable date range');
});

test('agent-task claim (a collector claim) shows when its lease expires, in ISO 8601 beside the milliseconds', async (t) => {
  const ev = makeEvidence(t);
  const out = join(ev.dir, 'unit.descriptor.json');
  const human = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'agent-task',
    'claim',
    '--profile',
    ev.profileId,
    '--change',
    CHANGE_ID,
    '--context',
    ev.store.contextDigest,
    '--token-file',
    ev.tokenFile,
    '--out',
    out,
  ]);
  assert.equal(human.code, 0, human.stderr);
  const match = /^ {2}attempt\.lease_expires_at_ms (\d+) \((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\)$/m.exec(
    human.stdout,
  );
  assert.ok(match, `no lease expiry in:\n${human.stdout}`);
  assert.equal(match[2], new Date(Number(match[1])).toISOString());
  const descriptor = JSON.parse(readFileSync(out, 'utf8')) as { attempt: { lease_expires_at_ms: number } };
  assert.equal(match[1], String(descriptor.attempt.lease_expires_at_ms));
});
