/** Every command's help is complete: a description, examples, and text for every flag and argument. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { REPO_ROOT, runCli } from './helpers/cli.js';

interface ManifestEntry {
  readonly description?: string;
  readonly examples?: unknown[];
  readonly flags: Record<string, { description?: string }>;
  readonly args: Record<string, { description?: string }>;
}

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, ManifestEntry>;
  topics?: unknown;
};
const pjson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  oclif: { topics: Record<string, { description?: string }> };
};

test('every command has a description, examples and described flags and arguments', () => {
  const missing: string[] = [];
  for (const [id, entry] of Object.entries(manifest.commands)) {
    if (!entry.description) missing.push(`${id}: description`);
    if (!entry.examples || entry.examples.length === 0) missing.push(`${id}: examples`);
    for (const [name, flag] of Object.entries(entry.flags)) if (!flag.description) missing.push(`${id}: --${name}`);
    for (const [name, arg] of Object.entries(entry.args)) if (!arg.description) missing.push(`${id}: ${name}`);
  }
  assert.deepEqual(missing, []);
});

test('every topic that holds commands has a description', () => {
  const topics = new Set(
    Object.keys(manifest.commands)
      .filter((id) => id.includes(':'))
      .map((id) => id.split(':')[0] ?? ''),
  );
  for (const topic of topics)
    assert.ok(pjson.oclif.topics[topic]?.description, `topic ${topic} has no description in package.json`);
});

test('--help of a nested command prints its usage and exits 0', async () => {
  const result = await runCli(['skill-workflow', 'run', '--help']);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /USAGE\n\s+\$ agentscm skill-workflow run \[RUN-ID\] \[FILE\]/);
});
