/**
 * `skill-workflow status` of a run whose command step failed shows the step's output tail, the way
 * a collected command's tail is shown (40 lines, 4 KiB, escaped), through the real CLI and the real
 * engine. The command writes far past its recipe's output bound: the head alone is retained as
 * output, the last bytes are kept beside it, and the tail shown is from the end, not the head.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';

const DOCKER = '/bin/true';
const RUNTIME = ['--docker', DOCKER, '--docker-socket', DOCKER_SOCKET];

before(async () => {
  await requireEngine();
});

interface Tail {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

interface StepJson {
  id: string;
  state: string;
  execution: { outcome: string | null; output_tail: Tail | null; output_tail_cut: Record<string, boolean> | null };
}

test(
  'a failed command step past its output bound shows the last lines of its output',
  { timeout: 180_000 },
  async (t) => {
    const world = await buildScenario(t, {
      argv: ['/bin/sh', '-c', 'seq 1 30000; printf "boom\\033[31m\\n" >&2; exit 3'],
      limits: { output_bytes: 4096 },
      requirement: false,
      enrollStep: null,
    });
    const cli = (args: string[]): ReturnType<typeof runCli> => runCli(['--data-dir', world.dataDir, ...args]);
    const run = await cli(['skill-workflow', 'run', 'r1', world.workflowFile, ...RUNTIME, '--json']);
    assert.ok(run.code !== null, run.stderr);

    const status = await cli(['skill-workflow', 'status', 'r1', '--json']);
    assert.equal(status.code, 0, status.stderr);
    const step = jsonOf<{ steps: StepJson[] }>(status).steps.find((s) => s.id === 'check');
    assert.ok(step !== undefined);
    assert.equal(step.state, 'failed');
    assert.notEqual(step.execution.outcome, 'passed');
    const tail = step.execution.output_tail;
    assert.ok(tail !== null, status.stdout);
    const lines = tail.stdout.split('\n');
    assert.ok(lines.length <= 40 && Buffer.byteLength(tail.stdout + tail.stderr) <= 4096, tail.stdout);
    // 4096 bytes of `seq` end near line 1000: the lines shown come from past the retained head.
    assert.ok(Math.max(...lines.map(Number).filter(Number.isFinite)) > 1100, `the tail is the head: ${tail.stdout}`);
    assert.equal(step.execution.output_tail_cut?.stdout, true);
    if (tail.stderr !== '') assert.equal(tail.stderr, 'boom\\x1b[31m');

    const human = await cli(['skill-workflow', 'status', 'r1']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /stdout, last lines \(earlier output left out\):/);
    assert.ok(human.stdout.includes(`         | ${lines.at(-1)}\n`), human.stdout);
  },
);
