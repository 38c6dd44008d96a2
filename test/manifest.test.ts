/**
 * oclif.manifest.json is committed and must describe the commands in src/commands exactly:
 * the same command IDs, descriptions, flags and arguments. Regenerate it with `npm run build`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'node:test';
import { pathToFileURL } from 'node:url';

import { REPO_ROOT } from './helpers/cli.js';

interface ManifestCommand {
  readonly description?: string;
  readonly flags: Record<string, unknown>;
  readonly args: Record<string, unknown>;
}

interface CommandClass {
  readonly description?: string;
  readonly flags?: Record<string, unknown>;
  readonly baseFlags?: Record<string, unknown>;
  readonly args?: Record<string, unknown>;
  readonly enableJsonFlag?: boolean;
}

function commandFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...commandFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.startsWith('_')) out.push(full);
  }
  return out;
}

const STALE = 'oclif.manifest.json is stale: run `npm run build` and commit it';

test('the committed manifest lists exactly the commands of src/commands with their flags and arguments', async () => {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, ManifestCommand>;
  };
  const root = join(REPO_ROOT, 'src', 'commands');
  const files = commandFiles(root);
  const ids = files.map((file) => relative(root, file).replace(/\.ts$/, '').split('/').join(':')).sort();
  assert.deepEqual(Object.keys(manifest.commands).sort(), ids, STALE);
  // bin/sort-manifest.js orders the commands, so that a rebuild leaves the committed file unchanged.
  assert.deepEqual(Object.keys(manifest.commands), [...Object.keys(manifest.commands)].sort(), STALE);
  for (const file of files) {
    const id = relative(root, file).replace(/\.ts$/, '').split('/').join(':');
    const mod = (await import(pathToFileURL(file).href)) as { default: CommandClass };
    const cls = mod.default;
    const entry = manifest.commands[id];
    assert.ok(entry !== undefined, STALE);
    assert.equal(entry.description, cls.description, `${id}: description differs; ${STALE}`);
    const flags = [
      ...Object.keys(cls.flags ?? {}),
      ...Object.keys(cls.baseFlags ?? {}),
      ...(cls.enableJsonFlag === true ? ['json'] : []),
    ].sort();
    assert.deepEqual(Object.keys(entry.flags).sort(), [...new Set(flags)], `${id}: flags differ; ${STALE}`);
    assert.deepEqual(
      Object.keys(entry.args).sort(),
      Object.keys(cls.args ?? {}).sort(),
      `${id}: arguments differ; ${STALE}`,
    );
  }
});
