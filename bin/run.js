#!/usr/bin/env node
// Entry point of the built CLI (dist/, made by bin/bundle.js). The steps every invocation takes —
// the leading --data-dir, no plugins, one error line for unknown commands — are in
// src/commands/_execute.ts, shared with bin/dev.js.
import { fileURLToPath } from 'node:url';

import { runAgentscm } from '../dist/commands/_execute.js';

await runAgentscm({ argv: process.argv.slice(2), root: fileURLToPath(import.meta.url) });
