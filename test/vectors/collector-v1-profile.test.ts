// Vector source: /work/shared/vectors/collector-v1.json (see README.md), computed independently
// with Python json (compact, ensure_ascii=False) + hashlib. This test reproduces the
// CollectorProfile part: the canonical bytes and collector_profile_id, byte for byte.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  collectorProfileId,
  collectorProfileToJson,
  decodeCollectorProfile,
  validateCollectorProfile,
} from '../../src/contracts/collector/profile.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { codeOf } from '../helpers/errors.js';

const HERE = dirname(fileURLToPath(import.meta.url));

function objectOf(value: JsonValue | undefined): JsonObject {
  assert.ok(isJsonObject(value));
  return value;
}

const vector = objectOf(parseStrictJson(readFileSync(join(HERE, 'collector-v1.json')), { maxBytes: 64 * 1024 }));
const profileJson = objectOf(vector.collector_profile);

test('collector-v1 vector: the profile decodes strictly and reproduces its canonical bytes and collector_profile_id', () => {
  const profile = validateCollectorProfile(profileJson);
  assert.equal(profile.registration_epoch, 3n);
  const canonical = Buffer.from(encodeCanonical(collectorProfileToJson(profile)));
  assert.equal(canonical.toString('utf8'), vector.collector_profile_canonical_utf8);
  assert.equal(collectorProfileId(profile), vector.collector_profile_id);
  // The same bytes through the file decoder give the same identity.
  assert.equal(collectorProfileId(decodeCollectorProfile(canonical)), vector.collector_profile_id);
});

test('collector-v1 vector: any changed binding changes the identity; unknown fields and other kinds are refused', () => {
  const base = validateCollectorProfile(profileJson);
  const changed = [
    { ...base, step_id: 'lint' },
    { ...base, registration_epoch: 4n },
    { ...base, recipe_digest: '0'.repeat(64) },
    { ...base, runtime_identity_digest: '0'.repeat(64) },
    { ...base, recipe: { ...base.recipe, argv: ['/bin/sh', '-c', 'make check'] } },
  ];
  for (const profile of changed) assert.notEqual(collectorProfileId(profile), vector.collector_profile_id);
  assert.equal(
    codeOf(() => validateCollectorProfile({ ...profileJson, extra: 1 })),
    'SCHEMA_UNKNOWN_FIELD',
  );
  assert.equal(
    codeOf(() => validateCollectorProfile({ ...profileJson, kind: 'review' })),
    'SCHEMA_TYPE',
  );
  assert.equal(
    codeOf(() => validateCollectorProfile({ ...profileJson, version: 2 })),
    'SCHEMA_VERSION_UNSUPPORTED',
  );
  assert.equal(
    codeOf(() => validateCollectorProfile({ ...profileJson, registration_epoch: 0 })),
    'SCHEMA_BOUND',
  );
  assert.equal(
    codeOf(() =>
      validateCollectorProfile({ ...profileJson, recipe: { ...objectOf(profileJson.recipe), workdir: '../x' } }),
    ),
    'PATH_INVALID',
  );
});
