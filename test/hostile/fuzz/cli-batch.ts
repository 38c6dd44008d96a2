/**
 * Run many agentscm invocations in one process, through the CLI's own entry (runAgentscm, what
 * bin/dev.js calls), so that a sample of a hundred hostile files costs one start-up instead of a
 * hundred. Usage: node --import tsx cli-batch.ts JOBS.json RESULTS.jsonl — JOBS is a JSON array
 * of argument lists; for each, one line {"index","exit","stderr","stdout"} is appended to
 * RESULTS as soon as the invocation ends ({"index","started":true} before it starts, so that a
 * parent that had to kill a stuck batch knows which invocation hung). stdin is not given to the
 * invocations: cases that need stdin are spawned one by one.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Interfaces } from '@oclif/core';

import { runAgentscm } from '../../../src/commands/_execute.js';

const [jobsFile, resultsFile] = process.argv.slice(2);
if (jobsFile === undefined || resultsFile === undefined) throw new Error('usage: cli-batch.ts JOBS.json RESULTS.jsonl');
const jobs = JSON.parse(readFileSync(jobsFile, 'utf8')) as string[][];

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Interfaces.PJSON;
pjson.oclif.commands = {
  strategy: 'pattern',
  target: './commands',
  globPatterns: ['**/*.ts', '!**/*.d.ts', '!**/_*.ts'],
};

// Each invocation's final flush listens once for 'drain' on stdout: many invocations in one
// process are not a leak to warn about (the warning would land in the next one's stderr).
process.stdout.setMaxListeners(0);
process.stderr.setMaxListeners(0);
const stdoutWrite = process.stdout.write.bind(process.stdout);
const stderrWrite = process.stderr.write.bind(process.stderr);

for (const [index, argv] of jobs.entries()) {
  appendFileSync(resultsFile, `${JSON.stringify({ index, started: true })}\n`);
  let out = '';
  let err = '';
  process.stdout.write = (chunk: string | Uint8Array): boolean => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  };
  process.stderr.write = (chunk: string | Uint8Array): boolean => {
    err += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  };
  process.exitCode = 0;
  try {
    await runAgentscm({ argv, root: join(root, 'src'), pjson });
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
  }
  const exit = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0);
  appendFileSync(resultsFile, `${JSON.stringify({ index, exit, stderr: err, stdout: out })}\n`);
}
process.exitCode = 0;
