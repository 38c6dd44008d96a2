#!/usr/bin/env -S node --import tsx
// Development entry: runs the TypeScript sources in src/ through tsx (no build step), with
// the same steps as bin/run.js (src/commands/_execute.ts). Tests spawn this so that they
// exercise the current source. Run it as `node --import tsx bin/dev.js ...`.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runAgentscm } from '../src/commands/_execute.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
pjson.oclif.commands = {
  ...pjson.oclif.commands,
  target: './commands',
  globPatterns: ['**/*.ts', '!**/*.d.ts', '!**/_*.ts'],
};
// src/ as the plugin root: oclif reads oclif.manifest.json (which names dist/ files) from the
// root, and src/ has none, so commands are discovered from the TypeScript sources.
await runAgentscm({ argv: process.argv.slice(2), root: join(root, 'src'), pjson });
