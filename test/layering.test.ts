/**
 * The layer map of docs/architecture.md is the folder map of src/: a module may import only
 * from its own layer or lower ones, and contracts/ and crypto/ do no I/O.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import test from 'node:test';

import { REPO_ROOT } from './helpers/cli.js';

/** Higher number = higher layer. */
const RANK: Record<string, number> = {
  commands: 10,
  doctor: 9.5,
  hub: 9,
  hooks: 8,
  collector: 7,
  tasks: 6,
  workflows: 5,
  git: 4.5,
  workspace: 4,
  native: 3,
  'agent-state': 2.5,
  contracts: 2,
  crypto: 1,
};
const NO_IO_LAYERS = new Set(['contracts', 'crypto']);
const IO_MODULES =
  /^(node:)?(fs|fs\/promises|child_process|net|http|https|dgram|os|worker_threads)$|^better-sqlite3$|^undici$|^execa$/;

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

const SRC = join(REPO_ROOT, 'src');
const IMPORT =
  /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function layerOf(file: string): string {
  const top = relative(SRC, file).split('/')[0] ?? '';
  return top;
}

test('every top-level folder of src/ is a known layer', () => {
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  for (const folder of folders) assert.ok(folder in RANK, `src/${folder} is not in the layer map`);
});

test('no module imports a higher layer, and contracts/ and crypto/ do no I/O', () => {
  const violations: string[] = [];
  for (const file of listTs(SRC)) {
    const from = layerOf(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3];
      if (spec === undefined) continue;
      if (spec.startsWith('.')) {
        const to = layerOf(resolve(dirname(file), spec));
        const fromRank = RANK[from];
        const toRank = RANK[to];
        if (fromRank === undefined || toRank === undefined) continue;
        const sameOrLower = toRank < fromRank || to === from;
        if (!sameOrLower) violations.push(`${relative(REPO_ROOT, file)} (${from}) imports ${spec} (${to})`);
      } else if (NO_IO_LAYERS.has(from) && IO_MODULES.test(spec)) {
        violations.push(`${relative(REPO_ROOT, file)} (${from}) imports I/O module ${spec}`);
      }
    }
  }
  assert.deepEqual(violations, []);
});
