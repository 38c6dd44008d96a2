/**
 * Messages a newcomer reads: verify-observation names both verification key IDs it compared,
 * and an invalid identifier's rule is said once.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { assertionToJson, taskResultAssertionDecoder } from '../../src/contracts/task/result.js';
import { createRepository } from '../../src/native/repositories.js';
import { createAuthority } from '../../src/native/store.js';
import { jsonOf, REPO_ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const golden = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'observation-golden-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(golden));
const goldenAssertion = taskResultAssertionDecoder.validate(golden.assertion_unsigned ?? null);

test('verify-observation with another key says which verification_key_id each side has', async (t) => {
  const dir = tempDir(t);
  type Key = { key_file: string; public_key: string; verification_key_id: string };
  const signer = jsonOf<Key>(await runCli(['agent-task', 'key', '--state-dir', join(dir, 'a'), '--json']));
  const other = jsonOf<Key>(await runCli(['agent-task', 'key', '--state-dir', join(dir, 'b'), '--json']));
  const executor = goldenAssertion.executor;
  assert.ok(executor !== null);
  const file = join(dir, 'observation.json');
  writeFileSync(
    file,
    encodeCanonical(
      assertionToJson({
        ...goldenAssertion,
        executor: { ...executor, verification_key_id: signer.verification_key_id },
      }),
    ),
  );
  const signed = await runCli(['agent-task', 'sign-observation', file, '--key', signer.key_file]);
  assert.equal(signed.code, 0, signed.stderr);
  const signedFile = join(dir, 'signed.json');
  writeFileSync(signedFile, signed.stdoutBytes);
  const result = await runCli(['agent-task', 'verify-observation', signedFile, '--public-key', other.public_key]);
  assert.equal(result.code, 1);
  assert.equal(
    result.stderr,
    `error[SIGNATURE_INVALID]: the observation names verification_key_id ${signer.verification_key_id}, but the given public key's verification_key_id is ${other.verification_key_id}\n`,
  );
});

test('an invalid identifier states its rule once, with no hint that repeats it', async (t) => {
  const data = tempDir(t);
  const auth = createAuthority(data);
  createRepository(auth, 'demo');
  auth.close();
  const result = await runCli(['--data-dir', data, 'change', 'show', 'bad id!', '--json']);
  assert.equal(result.code, 2);
  assert.equal(
    result.stderr,
    'error[ID_INVALID]: Change ID "bad id!" is not valid: it must be 1 to 128 characters of A-Z a-z 0-9 . _ -\n',
  );
  assert.equal(jsonOf<{ error: { hint?: string } }>(result).error.hint, undefined);
});
