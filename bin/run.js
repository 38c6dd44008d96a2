#!/usr/bin/env node
// Entry point. `agentscm --data-dir D <command> ...` is accepted as the spec writes it:
// a leading --data-dir is moved into AGENTSCM_DATA_DIR before oclif parses the command.
import { execute } from '@oclif/core';

const argv = process.argv.slice(2);
while (argv.length > 0 && argv[0] !== undefined && argv[0].startsWith('--data-dir')) {
  const head = argv.shift();
  if (head === '--data-dir') {
    const value = argv.shift();
    if (value === undefined || value.startsWith('-')) {
      process.stderr.write('error[USAGE]: --data-dir needs a directory; run `agentscm --help`\n');
      process.exit(2);
    }
    process.env.AGENTSCM_DATA_DIR = value;
  } else {
    process.env.AGENTSCM_DATA_DIR = head.slice('--data-dir='.length);
  }
}

await execute({ args: argv, dir: import.meta.url });
