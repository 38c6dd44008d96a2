// docs/wire.md: a u64 keeps its full value "from input to storage to output" — decode, store in a
// real SQLite file with the project's u64 column convention, read back, print and hash.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';

import { U64_SCHEMA } from '../../src/contracts/ids.js';
import { encodeCanonicalText, formatJson } from '../../src/contracts/json/canonical-json.js';
import { defineDecoder } from '../../src/contracts/json/schema.js';
import { openWritable, u64FromSql, u64ToSql } from '../../src/native/sqlite.js';
import { tempDir } from '../helpers/tmp.js';

const FENCED = defineDecoder<{ fence: bigint }>('test.fenced.v1', {
  type: 'object',
  properties: { fence: U64_SCHEMA },
  required: ['fence'],
  additionalProperties: false,
});

test('u64 values stay exact from wire bytes through SQLite to printed and canonical output', (t) => {
  const db = openWritable(
    join(tempDir(t), 'u64.sqlite'),
    [(d) => d.exec('CREATE TABLE fences (id INTEGER PRIMARY KEY, fence TEXT NOT NULL)')],
    'u64 test store',
  );
  t.after(() => db.close());
  const inputs = [
    '0',
    '1',
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '9223372036854775807',
    '9223372036854775808',
    '18446744073709551614',
    '18446744073709551615',
  ];
  const insert = db.prepare('INSERT INTO fences (fence) VALUES (?)');
  for (const text of inputs) insert.run(u64ToSql(FENCED.decode(Buffer.from(`{"fence":${text}}`), 64).fence));
  const stored = db.prepare('SELECT fence FROM fences ORDER BY fence').pluck().all();
  const back = stored.map((value) => u64FromSql(value));
  assert.deepEqual(back.map(String), inputs);
  for (const [index, value] of back.entries()) {
    assert.equal(encodeCanonicalText({ fence: value }), `{"fence":${inputs[index] ?? ''}}`);
    assert.equal(formatJson({ fence: value }), `{\n  "fence": ${inputs[index] ?? ''}\n}`);
  }
  // Text ordering of the padded column is numeric ordering.
  assert.deepEqual(
    back,
    [...back].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  );
});
