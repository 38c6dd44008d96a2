#!/usr/bin/env -S node --import tsx
// Development entry: runs the TypeScript sources in src/ through tsx (no build step), with
// the same argument handling as bin/run.js. Tests spawn this so that they exercise the
// current source. Run it as `node --import tsx bin/dev.js ...`.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Config, flush, handle, run } from '@oclif/core';
import { takeLeadingDataDir } from './leading-flags.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
pjson.oclif.commands = { ...pjson.oclif.commands, target: './commands', globPatterns: ['**/*.ts', '!**/*.d.ts', '!**/_*.ts'] };
const argv = takeLeadingDataDir(process.argv.slice(2));
try {
  // src/ as the plugin root: oclif reads oclif.manifest.json (which names dist/ files) from the
  // root, and src/ has none, so commands are discovered from the TypeScript sources.
  const config = await Config.load({ root: join(root, 'src'), pjson });
  await run(argv, config);
  await flush();
} catch (error) {
  await handle(error);
}
