#!/usr/bin/env node
// Entry point of the built CLI (dist/, made by bin/bundle.js). See leading-flags.js for the
// global --data-dir.
import { execute } from '../dist/commands/_execute.js';
import { takeLeadingDataDir } from './leading-flags.js';

await execute({ args: takeLeadingDataDir(process.argv.slice(2)), dir: import.meta.url });
