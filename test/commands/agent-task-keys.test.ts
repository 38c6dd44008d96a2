/**
 * The agent-task key, enroll, revoke and observation commands, run as a user would: the real CLI
 * in a child process against real files (key permissions as set on disk, a real authority file).
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import {
  assertionToJson,
  taskResultAssertionDecoder,
  type TaskResultAssertion,
} from '../../src/contracts/task/result.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { createRepository } from '../../src/native/repositories.js';
import { createAuthority } from '../../src/native/store.js';
import { jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const golden = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'observation-golden-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(golden));
const goldenAssertion = taskResultAssertionDecoder.validate(golden.assertion_unsigned ?? null);

const mode = (path: string): number => statSync(path).mode & 0o777;

test('key: writes a 0600 key file in a new 0700 directory and prints its public key and id', async (t) => {
  const state = join(tempDir(t), 'collector-state');
  const result = await runCli(['agent-task', 'key', '--state-dir', state, '--json']);
  assert.equal(result.code, 0, result.stderr);
  const out = jsonOf<{ key_file: string; public_key: string; verification_key_id: string }>(result);
  assert.equal(out.key_file, join(state, 'signing-key.json'));
  assert.equal(mode(state), 0o700);
  assert.equal(mode(out.key_file), 0o600);
  assert.equal(out.verification_key_id, sha256Hex(Buffer.from(out.public_key, 'hex')));
  const file = parseStrictJson(readFileSync(out.key_file), { maxBytes: 1024 });
  assert.ok(isJsonObject(file));
  assert.deepEqual(Object.keys(file), ['version', 'algorithm', 'private_key', 'public_key', 'key_id']);
  assert.equal(file.public_key, out.public_key);
  assert.equal(file.key_id, out.verification_key_id);
  assert.match(file.private_key as string, /^[0-9a-f]{64}$/);
});

test('key: never overwrites, and refuses a group- or world-accessible directory', async (t) => {
  const state = join(tempDir(t), 'state');
  assert.equal((await runCli(['agent-task', 'key', '--state-dir', state])).code, 0);
  const before = readFileSync(join(state, 'signing-key.json'));
  const again = await runCli(['agent-task', 'key', '--state-dir', state, '--json']);
  assert.equal(again.code, 3);
  assert.equal(jsonOf<{ error: { code: string } }>(again).error.code, 'KEY_FILE_EXISTS');
  assert.deepEqual(readFileSync(join(state, 'signing-key.json')), before);

  const open = join(tempDir(t), 'open');
  mkdirSync(open, { mode: 0o700 });
  chmodSync(open, 0o755);
  const refused = await runCli(['agent-task', 'key', '--state-dir', open]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^error\[KEY_PERMISSIONS\]: .*mode 0755/);
  assert.equal(existsSync(join(open, 'signing-key.json')), false);
  chmodSync(open, 0o700);
  assert.equal((await runCli(['agent-task', 'key', '--state-dir', open])).code, 0);
});

test('key: concurrent runs on one directory create exactly one complete key file', async (t) => {
  const state = join(tempDir(t), 'race');
  const runs = await Promise.all([0, 1, 2].map(() => runCli(['agent-task', 'key', '--state-dir', state, '--json'])));
  const codes = runs.map((r) => r.code).sort();
  assert.deepEqual(codes, [0, 3, 3], runs.map((r) => r.stderr).join('\n'));
  const winner = runs.find((r) => r.code === 0);
  assert.ok(winner !== undefined);
  const file = parseStrictJson(readFileSync(join(state, 'signing-key.json')), { maxBytes: 1024 });
  assert.ok(isJsonObject(file));
  assert.equal(file.public_key, jsonOf<{ public_key: string }>(winner).public_key);
  assert.deepEqual(readdirSync(state), ['signing-key.json']);
});

test('enroll, revoke and re-enroll through the CLI; nothing is created without a store', async (t) => {
  const dataDir = tempDir(t);
  const missing = join(tempDir(t), 'no-store');
  const publicKey = '197f6b23e16c8532c6abc838facd5ea789be0c76b2920334039bfa8b3d368d61';
  const enrollArgs = [
    'agent-task',
    'enroll',
    '--repository',
    'demo',
    '--profile',
    'default',
    '--step',
    'unit-tests',
    '--executor',
    'ci-box',
    '--public-key',
    publicKey,
    '--json',
  ];
  const none = await runCli(['--data-dir', missing, ...enrollArgs]);
  assert.equal(none.code, 4);
  assert.equal(existsSync(missing), false);

  const auth = createAuthority(dataDir);
  createRepository(auth, 'demo');
  auth.close();

  const first = await runCli(['--data-dir', dataDir, ...enrollArgs]);
  assert.equal(first.code, 0, first.stderr);
  const one = jsonOf<{ registration_id: string; registration_epoch: number; verification_key_id: string }>(first);
  assert.equal(one.registration_epoch, 1);
  assert.equal(one.verification_key_id, sha256Hex(Buffer.from(publicKey, 'hex')));

  const revoked = await runCli(['agent-task', 'revoke', one.registration_id, '--reason', 'rotated', '--json'], {
    env: { AGENTSCM_DATA_DIR: dataDir },
  });
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.deepEqual(jsonOf(revoked), { registration_id: one.registration_id, revoked: true, already_revoked: false });

  const second = await runCli(['--data-dir', dataDir, ...enrollArgs]);
  const two = jsonOf<{ registration_id: string; registration_epoch: number; supersedes_epoch: number }>(second);
  assert.equal(two.registration_epoch, 2);
  assert.equal(two.supersedes_epoch, 1);

  const unknown = await runCli(['agent-task', 'revoke', 'reg-nope', '--data-dir', dataDir]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^error\[REGISTRATION_NOT_FOUND\]/);
  const badKey = await runCli([
    '--data-dir',
    dataDir,
    ...enrollArgs.slice(0, -3),
    '--public-key',
    `01${'00'.repeat(31)}`,
    '--json',
  ]);
  assert.equal(badKey.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(badKey).error.code, 'PUBLIC_KEY_INVALID');
});

test('observation-digest: digest and length as JSON, exact signing bytes with --bytes, stdin with -', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'observation.json');
  writeFileSync(file, encodeCanonical(assertionToJson(goldenAssertion)));
  const json = await runCli(['agent-task', 'observation-digest', file, '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(jsonOf(json), { digest: golden.digest, length: Number(golden.signing_bytes_length) });
  const bytes = await runCli(['agent-task', 'observation-digest', file, '--bytes']);
  assert.equal(bytes.code, 0, bytes.stderr);
  assert.equal(bytes.stdoutBytes.toString('hex'), golden.signing_bytes_hex);
  const stdin = await runCli(['agent-task', 'observation-digest', '-', '--json'], { input: readFileSync(file) });
  assert.equal(jsonOf<{ digest: string }>(stdin).digest, golden.digest);
  const bad = await runCli(['agent-task', 'observation-digest', '-', '--json'], { input: '{"version":1,"version":1}' });
  assert.equal(bad.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(bad).error.code, 'JSON_DUPLICATE_KEY');
  const both = await runCli(['agent-task', 'observation-digest', file, '--bytes', '--json']);
  assert.equal(both.code, 2);
  assert.equal(jsonOf<{ error: { code: string } }>(both).error.code, 'USAGE');
});

test('sign-observation and verify-observation round trip; wrong key, tampering and an open key file fail', async (t) => {
  const dir = tempDir(t);
  const state = join(dir, 'state');
  const created = jsonOf<{ key_file: string; public_key: string; verification_key_id: string }>(
    await runCli(['agent-task', 'key', '--state-dir', state, '--json']),
  );
  const executor = goldenAssertion.executor;
  assert.ok(executor !== null);
  const unsigned: TaskResultAssertion = {
    ...goldenAssertion,
    executor: { ...executor, verification_key_id: created.verification_key_id },
  };
  const file = join(dir, 'observation.json');
  writeFileSync(file, encodeCanonical(assertionToJson(unsigned)));

  const signedRun = await runCli(['agent-task', 'sign-observation', file, '--key', created.key_file, '--json']);
  assert.equal(signedRun.code, 0, signedRun.stderr);
  const signedFile = join(dir, 'signed.json');
  writeFileSync(signedFile, signedRun.stdoutBytes);
  const signed = taskResultAssertionDecoder.decode(signedRun.stdoutBytes);
  assert.equal(signed.fence, 18446744073709551615n);
  assert.match(signed.executor_provenance?.signature ?? '', /^[0-9a-f]{128}$/);

  const ok = await runCli([
    'agent-task',
    'verify-observation',
    signedFile,
    '--public-key',
    created.public_key,
    '--json',
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(jsonOf(ok), {
    valid: true,
    observation_digest: signed.executor_provenance?.observation_digest,
    verification_key_id: created.verification_key_id,
  });

  const wrongKey = await runCli([
    'agent-task',
    'verify-observation',
    signedFile,
    '--public-key',
    golden.public_key_hex as string,
    '--json',
  ]);
  assert.equal(wrongKey.code, 1);
  assert.equal(jsonOf<{ error: { code: string } }>(wrongKey).error.code, 'SIGNATURE_INVALID');

  const tampered = join(dir, 'tampered.json');
  writeFileSync(tampered, readFileSync(signedFile, 'utf8').replace('"outcome": "uncertain"', '"outcome": "failed"'));
  const tamperedRun = await runCli(['agent-task', 'verify-observation', tampered, '--public-key', created.public_key]);
  assert.equal(tamperedRun.code, 1);
  assert.match(tamperedRun.stderr, /^error\[SIGNATURE_INVALID\]/);

  chmodSync(created.key_file, 0o644);
  const openKey = await runCli(['agent-task', 'sign-observation', file, '--key', created.key_file]);
  assert.equal(openKey.code, 2);
  assert.match(openKey.stderr, /^error\[KEY_PERMISSIONS\]: .*mode 0644/);
});
