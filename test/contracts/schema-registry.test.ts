import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'node:test';
import { pathToFileURL } from 'node:url';

import { allDecoders } from '../../src/contracts/json/schema-registry.js';
import { definedDecoders, metaSchemaProblems } from '../../src/contracts/json/schema.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { expectedFiles, schemaDifferences } from '../tools/publish-schemas.js';

const PUBLISH = 'node --import tsx test/tools/publish-schemas.ts';

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out.sort();
}

test('docs/schemas matches the schema registry', () => {
  const problems = schemaDifferences();
  assert.deepEqual(
    problems,
    [],
    `docs/schemas is out of date; run \`${PUBLISH}\` and commit docs/schemas:\n  ${problems.join('\n  ')}`,
  );
});

test('every decoder defined under src/ is registered in src/contracts/json/schema-registry.ts', async () => {
  const registered = new Set(allDecoders().map((d) => d.id));
  const missing: string[] = [];
  const callsDefine = /\bdefine\w*Decoder\s*[<(]/;
  const sources = sourceFiles(join(REPO_ROOT, 'src'));
  for (const file of sources) {
    if (file.endsWith(join('contracts', 'schema.ts'))) continue;
    if (!callsDefine.test(readFileSync(file, 'utf8'))) continue;
    const before = new Set(definedDecoders().map((d) => d.id));
    await import(pathToFileURL(file).href);
    for (const decoder of definedDecoders()) {
      if (before.has(decoder.id) || registered.has(decoder.id)) continue;
      // The module that spells the id is the one to register; the imported file may only reach it.
      const owner = sources.find((f) => readFileSync(f, 'utf8').includes(`'${decoder.id}'`)) ?? file;
      missing.push(`${decoder.id} (in ${relative(REPO_ROOT, owner)})`);
    }
  }
  assert.deepEqual(
    missing,
    [],
    `add one import line per module to src/contracts/json/schema-registry.ts, then run \`${PUBLISH}\`:\n  ${missing.join('\n  ')}`,
  );
});

test('the registry lists decoders sorted by id, each id once, and never test decoders', () => {
  const ids = allDecoders().map((d) => d.id);
  assert.ok(ids.length > 0);
  assert.deepEqual(ids, [...ids].sort());
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(ids.every((id) => !id.startsWith('test.')));
});

test('the up-to-date check reports missing, changed and stale files', (t) => {
  const dir = tempDir(t);
  const expected = expectedFiles();
  const [first, second] = [...expected.keys()];
  assert.ok(first !== undefined && second !== undefined, 'needs two registered schemas');
  assert.equal(schemaDifferences(dir).length, expected.size);
  for (const [name, text] of expected) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  assert.deepEqual(schemaDifferences(dir), []);
  writeFileSync(join(dir, first), `${expected.get(first) ?? ''} `);
  mkdirSync(join(dir, 'old'), { recursive: true });
  writeFileSync(join(dir, 'old', 'gone.v1.schema.json'), '{}');
  assert.deepEqual(schemaDifferences(dir), [
    `out of date: docs/schemas/${first}`,
    'no longer defined: docs/schemas/old/gone.v1.schema.json',
  ]);
});

test('each published schema is valid JSON carrying its id and the decoder schema', () => {
  for (const decoder of allDecoders()) {
    const text = expectedFiles().get(`${decoder.id}.schema.json`);
    assert.ok(text !== undefined);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    assert.equal(parsed.$schema, 'http://json-schema.org/draft-07/schema#');
    assert.equal(parsed.additionalProperties, (decoder.schema as Record<string, unknown>).additionalProperties);
  }
});

test('every registered schema compiles under ajv strict mode (schemas compile lazily at run time)', () => {
  for (const decoder of allDecoders()) assert.doesNotThrow(() => decoder.compile(), decoder.id);
});

test('every registered schema is valid against the draft-07 meta-schema and the custom keyword meta-schemas', () => {
  // The run-time ajv instance skips this check to start faster (src/contracts/json/schema.ts createAjv).
  for (const decoder of allDecoders()) assert.equal(metaSchemaProblems(decoder.schema), null, decoder.id);
});
