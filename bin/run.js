#!/usr/bin/env node
// Entry point of the built CLI (dist/). See leading-flags.js for the global --data-dir.
import { execute } from '@oclif/core';
import { takeLeadingDataDir } from './leading-flags.js';

await execute({ args: takeLeadingDataDir(process.argv.slice(2)), dir: import.meta.url });
