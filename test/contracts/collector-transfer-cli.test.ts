/**
 * `agentscm agent-task transfer show` as a user runs it (a real process of bin/dev.js) on the
 * envelope of test/vectors/collector-v1.json and on damaged copies: the header, records,
 * digests and signature check are printed exactly; every refusal exits 2 with its documented
 * code; nothing is created in the data directory.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { isJsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const vector = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'collector-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(vector));
const envelope = Buffer.from(vector.envelope_hex as string, 'hex');
const publicKeyHex = vector.public_key_hex as string;

interface Setup {
  readonly dir: string;
  /** A data directory that must never be created. */
  readonly dataDir: string;
  readonly good: string;
  readonly file: (name: string, bytes: Uint8Array) => string;
}

function setup(t: TestContext): Setup {
  const dir = tempDir(t, 'agentscm-transfer-show-');
  const file = (name: string, bytes: Uint8Array): string => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  return { dir, dataDir: join(dir, 'data'), good: file('good.agscmtr', envelope), file };
}

function errorCodeOf(stdout: string): unknown {
  const parsed = parseStrictJson(Buffer.from(stdout), { maxBytes: 1 << 20 });
  assert.ok(isJsonObject(parsed) && isJsonObject(parsed.error), stdout);
  return parsed.error.code;
}

test('without a key it prints the header, records and digests and says the signature is not checked', async (t) => {
  const { dataDir, good } = setup(t);
  const result = await runCli(['agent-task', 'transfer', 'show', good, '--data-dir', dataDir]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    new RegExp(`^transfer envelope v1: 1436 bytes, transfer digest ${vector.envelope_sha256 as string}$`, 'm'),
  );
  assert.match(result.stdout, new RegExp(`^header digest ${vector.transfer_header_digest as string}$`, 'm'));
  assert.match(result.stdout, /"fence": 18446744073709551615,/);
  assert.match(
    result.stdout,
    /^ {2}0 execution_request 59 bytes sha256 5c1c6900899820554054c8c976fd42fd7e707be0b48706d253559de73d48069d$/m,
  );
  assert.match(
    result.stdout,
    /^ {2}1 execution_record 48 bytes sha256 d6e66eff184918fbba8388469756a5ebc46929eea40434d550c90543001d14cc$/m,
  );
  assert.match(result.stdout, /: not checked \(pass --public-key HEX to verify it\)$/m);
  assert.equal(result.stderr, '');
  assert.equal(existsSync(dataDir), false, 'transfer show creates nothing');
});

test('with the key and --json it prints one document with the signature verified', async (t) => {
  const { dataDir, good } = setup(t);
  const result = await runCli([
    'agent-task',
    'transfer',
    'show',
    good,
    '--public-key',
    publicKeyHex,
    '--json',
    '--data-dir',
    dataDir,
  ]);
  assert.equal(result.code, 0, result.stderr);
  const doc = parseStrictJson(result.stdoutBytes, { maxBytes: 1 << 20 });
  assert.ok(isJsonObject(doc));
  assert.deepEqual(Object.keys(doc), ['length', 'transfer_digest', 'header_digest', 'header', 'records', 'signature']);
  assert.equal(doc.length, 1436);
  assert.equal(doc.transfer_digest, vector.envelope_sha256);
  assert.equal(doc.header_digest, vector.transfer_header_digest);
  assert.deepEqual(doc.header, vector.transfer_header);
  assert.deepEqual(doc.records, (vector.transfer_header as { records: unknown }).records);
  assert.deepEqual(doc.signature, {
    hex: vector.transfer_signature_hex,
    check: 'valid',
    verification_key_id: vector.verification_key_id,
  });
  assert.equal(existsSync(dataDir), false);
});

test('the envelope can come from stdin', async () => {
  const result = await runCli(['agent-task', 'transfer', 'show', '-', '--json'], { input: envelope });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`"transfer_digest": "${vector.envelope_sha256 as string}"`));
});

test('another key, a bad key and every damaged envelope are refused with exit 2 and their codes', async (t) => {
  const { dir, dataDir, good, file } = setup(t);
  const changedRecord = Buffer.from(envelope);
  changedRecord[envelope.byteLength - 1] = (changedRecord[envelope.byteLength - 1] as number) ^ 1;
  const cases: [string, string[], string][] = [
    [
      'another key',
      [good, '--public-key', '3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29'],
      'TRANSFER_SIGNATURE_INVALID',
    ],
    ['a key that is not hex', [good, '--public-key', 'zz'], 'PUBLIC_KEY_INVALID'],
    ['a changed record', [file('record.agscmtr', changedRecord)], 'TRANSFER_RECORD_DIGEST_MISMATCH'],
    ['a truncated envelope', [file('short.agscmtr', envelope.subarray(0, 1000))], 'TRANSFER_TRUNCATED'],
    ['trailing bytes', [file('long.agscmtr', Buffer.concat([envelope, Buffer.from('\n')]))], 'TRANSFER_TRAILING_BYTES'],
    [
      'not an envelope',
      [file('json.agscmtr', Buffer.from(vector.transfer_header_canonical_utf8 as string))],
      'TRANSFER_MAGIC_INVALID',
    ],
    ['a directory', [dir], 'INPUT_NOT_REGULAR_FILE'],
  ];
  for (const [name, args, code] of cases) {
    const result = await runCli(['agent-task', 'transfer', 'show', ...args, '--json', '--data-dir', dataDir]);
    assert.equal(result.code, 2, `${name}: ${result.stderr}`);
    assert.equal(errorCodeOf(result.stdout), code, name);
    assert.match(result.stderr, new RegExp(`^error\\[${code}\\]: `), name);
  }
  assert.equal(existsSync(dataDir), false);
});

test('a file over 16 MiB is refused from its size before it is read', async (t) => {
  const path = setup(t).file('big.agscmtr', envelope);
  truncateSync(path, 16 * 1024 * 1024 + 1);
  const result = await runCli(['agent-task', 'transfer', 'show', path, '--json']);
  assert.equal(result.code, 2, result.stderr);
  assert.equal(errorCodeOf(result.stdout), 'INPUT_TOO_LARGE');
  assert.match(
    result.stderr,
    /is 16777217 bytes, more than the limit of 16777216; it was not read; a collector transfer envelope is at most 16 MiB/,
  );
});
