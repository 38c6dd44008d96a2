/**
 * The key file of docs/wire.md "Keys": strict, self-consistent decoding (src/contracts/key-file.ts)
 * and the owner-private rules of the key store (src/collector/key-store.ts) on real files.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { createSigningKey, loadSigningKey } from '../../src/collector/key-store.js';
import { decodeKeyFile, encodeKeyFile, KEY_FILE_MAX_BYTES } from '../../src/contracts/key-file.js';
import { generateKeyPair, verificationKeyId } from '../../src/crypto/ed25519.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';

const { privateKey, publicKey } = generateKeyPair();
const encoded = Buffer.from(encodeKeyFile(privateKey));
const fields = (): Record<string, unknown> => JSON.parse(encoded.toString('utf8')) as Record<string, unknown>;
const bytesOf = (value: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify(value));

test('encode then decode gives the same key, public key and key id', () => {
  assert.match(
    encoded.toString('utf8'),
    /^\{"version":1,"algorithm":"ed25519","private_key":"[0-9a-f]{64}","public_key":"[0-9a-f]{64}","key_id":"[0-9a-f]{64}"\}\n$/,
  );
  const key = decodeKeyFile(encoded);
  assert.deepEqual(key.privateKey, privateKey);
  assert.deepEqual(key.publicKey, publicKey);
  assert.equal(key.keyId, verificationKeyId(publicKey));
});

test('a key file whose public key or key id does not derive from the private key is refused', () => {
  const other = Buffer.from(generateKeyPair().publicKey).toString('hex');
  assert.equal(
    codeOf(() => decodeKeyFile(bytesOf({ ...fields(), public_key: other }))),
    'KEY_FILE_INVALID',
  );
  assert.equal(
    codeOf(() => decodeKeyFile(bytesOf({ ...fields(), key_id: '0'.repeat(64) }))),
    'KEY_FILE_INVALID',
  );
});

test('unknown fields, other algorithms or versions, duplicate keys and oversize files are refused', () => {
  assert.equal(
    codeOf(() => decodeKeyFile(bytesOf({ ...fields(), comment: 'x' }))),
    'KEY_FILE_INVALID',
  );
  assert.equal(
    codeOf(() => decodeKeyFile(bytesOf({ ...fields(), algorithm: 'ed448' }))),
    'KEY_FILE_INVALID',
  );
  assert.equal(
    codeOf(() => decodeKeyFile(bytesOf({ ...fields(), version: 2 }))),
    'KEY_FILE_INVALID',
  );
  assert.equal(
    codeOf(() => decodeKeyFile(Buffer.from(encoded.toString('utf8').replace('{', '{"version":1,')))),
    'KEY_FILE_INVALID',
  );
  assert.equal(
    codeOf(() => decodeKeyFile(Buffer.concat([encoded, Buffer.alloc(KEY_FILE_MAX_BYTES, 0x20)]))),
    'KEY_FILE_INVALID',
  );
});

test('the store sets 0700/0600, loads its own key, and refuses open modes, symlinks and overwrites', (t) => {
  const root = tempDir(t);
  const state = join(root, 'state');
  const created = createSigningKey(state);
  assert.equal(loadSigningKey(created.key_file).publicKeyHex, created.public_key);
  assert.equal(
    codeOf(() => createSigningKey(state)),
    'KEY_FILE_EXISTS',
  );

  chmodSync(created.key_file, 0o640);
  assert.equal(
    codeOf(() => loadSigningKey(created.key_file)),
    'KEY_PERMISSIONS',
  );
  chmodSync(created.key_file, 0o600);
  chmodSync(state, 0o750);
  assert.equal(
    codeOf(() => loadSigningKey(created.key_file)),
    'KEY_PERMISSIONS',
  );
  chmodSync(state, 0o700);

  const link = join(state, 'link.json');
  symlinkSync(created.key_file, link);
  assert.equal(
    codeOf(() => loadSigningKey(link)),
    'KEY_PERMISSIONS',
  );
  const linkedDir = join(root, 'linked-state');
  symlinkSync(state, linkedDir);
  assert.equal(
    codeOf(() => createSigningKey(linkedDir)),
    'KEY_PERMISSIONS',
  );

  const big = join(state, 'big.json');
  writeFileSync(big, Buffer.alloc(KEY_FILE_MAX_BYTES + 1, 0x20), { mode: 0o600 });
  assert.equal(
    codeOf(() => loadSigningKey(big)),
    'KEY_FILE_INVALID',
  );
  assert.equal(
    codeOf(() => loadSigningKey(join(state, 'missing.json'))),
    'INPUT_NOT_FOUND',
  );
  assert.deepEqual(readFileSync(created.key_file).byteLength > 0, true);
});

test('an existing world-accessible directory is refused, not repaired', (t) => {
  const dir = join(tempDir(t), 'shared');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  assert.equal(
    codeOf(() => createSigningKey(dir)),
    'KEY_PERMISSIONS',
  );
  chmodSync(dir, 0o701);
  assert.equal(
    codeOf(() => createSigningKey(dir)),
    'KEY_PERMISSIONS',
  );
});
