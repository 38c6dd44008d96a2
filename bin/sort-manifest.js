#!/usr/bin/env node
// `oclif manifest` lists commands in the order their modules finished loading, which varies
// from build to build; sorting by command ID keeps the committed oclif.manifest.json stable.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const path = fileURLToPath(new URL('../oclif.manifest.json', import.meta.url));
const manifest = JSON.parse(readFileSync(path, 'utf8'));
const ids = Object.keys(manifest.commands).sort();
manifest.commands = Object.fromEntries(ids.map((id) => [id, manifest.commands[id]]));
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
