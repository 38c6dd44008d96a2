/**
 * Writes docs/schemas/<id>.schema.json for every decoder in src/contracts/json/schema-registry.ts
 * and removes published files whose decoder no longer exists.
 *
 *   node --import tsx test/tools/publish-schemas.ts          write docs/schemas/
 *   node --import tsx test/tools/publish-schemas.ts --check  exit 1 and list the differences
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { allDecoders } from '../../src/contracts/json/schema-registry.js';
import type { Decoder } from '../../src/contracts/json/schema.js';

export const SCHEMA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'schemas');
const SUFFIX = '.schema.json';

/** The published text of one decoder's schema. */
export function publishedText(decoder: Decoder<unknown>): string {
  const { versionField, supportedVersions } = decoder.options;
  const version =
    versionField === undefined
      ? ''
      : ` Field "${versionField}" is checked first; supported: ${(supportedVersions ?? []).map(String).join(', ')}.`;
  const document = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `${decoder.id}${SUFFIX}`,
    $comment: `agentscm strict JSON (docs/strict-json.md): UTF-8 without BOM, no duplicate keys, integers unsigned without sign/fraction/exponent. Custom keywords: u64 (exact unsigned 64-bit integer), maxUtf8Bytes (string length in UTF-8 bytes), idKind (identifier rules of docs/wire.md).${version}`,
    ...decoder.schema,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** Expected files (relative path under docs/schemas → text). */
export function expectedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const decoder of allDecoders()) files.set(`${decoder.id}${SUFFIX}`, publishedText(decoder));
  return files;
}

/** docs/schemas/external holds the agent clients' own schemas (its README), not registry output. */
const NOT_PUBLISHED_HERE = 'external';

function listPublished(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (at: string): void => {
    for (const name of readdirSync(at)) {
      const full = join(at, name);
      if (at === dir && name === NOT_PUBLISHED_HERE) continue;
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(SUFFIX)) out.push(relative(dir, full).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** Differences between docs/schemas and the registry, as human-readable lines. */
export function schemaDifferences(dir = SCHEMA_DIR): string[] {
  const expected = expectedFiles();
  const problems: string[] = [];
  for (const [name, text] of expected) {
    const path = join(dir, name);
    if (!existsSync(path)) problems.push(`missing: docs/schemas/${name}`);
    else if (readFileSync(path, 'utf8') !== text) problems.push(`out of date: docs/schemas/${name}`);
  }
  for (const name of listPublished(dir))
    if (!expected.has(name)) problems.push(`no longer defined: docs/schemas/${name}`);
  return problems;
}

function publish(dir = SCHEMA_DIR): void {
  const expected = expectedFiles();
  for (const name of listPublished(dir)) if (!expected.has(name)) rmSync(join(dir, name));
  for (const [name, text] of expected) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  process.stdout.write(`wrote ${expected.size} schemas to docs/schemas/\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const problems = schemaDifferences();
    for (const line of problems) process.stdout.write(`${line}\n`);
    process.exitCode = problems.length === 0 ? 0 : 1;
  } else {
    publish();
  }
}
