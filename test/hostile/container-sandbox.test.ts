/**
 * Hostile reproducers for the container sandbox, against the real engine (image
 * local/busybox:1 at AGENTSCM_TEST_DOCKER_SOCKET; these tests fail, not skip, without it).
 *
 * Scratch used to be a noexec /tmp, so a suite could not run anything it built (exit 126), and
 * /dev/shm was a second writable tmpfs of 64 MiB outside scratch_bytes. Scratch is now exec,
 * sized by the recipe, HOME and TMPDIR, and the only writable place.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { createCommandStepRuntime, type CommandRuntimeHandle } from '../../src/collector/command-step-runtime.js';
import { getCommandAttemptOutput } from '../../src/workflows/command-attempts.js';
import {
  DOCKER_EXE,
  DOCKER_SOCKET,
  makeSuiteRepo,
  recipeBytes,
  requireEngine,
  stepRequest,
  type RecipeFields,
  type Repo,
} from '../support/collector.js';
import { openJournal } from '../support/journal.js';

let runtime: CommandRuntimeHandle;
let repo: Repo & { remove(): void };
let counter = 0;

before(async () => {
  await requireEngine();
  runtime = await createCommandStepRuntime({ docker: DOCKER_EXE, dockerSocket: DOCKER_SOCKET });
  repo = makeSuiteRepo({ 'README.md': 'sandbox\n' });
});

after(async () => {
  await runtime.close();
  repo.remove();
});

async function run(fields: RecipeFields): Promise<{ state: string; outcome: string; stdout: string; stderr: string }> {
  counter += 1;
  const result = await runtime.run(
    stepRequest(repo, { runId: `sandbox-${counter}`, change: `sandbox-${counter}`, recipe: recipeBytes(fields) }),
  );
  const journal = openJournal(repo.dataDir, 'read');
  try {
    const output = getCommandAttemptOutput(journal.db, result.attemptId);
    return {
      state: result.state,
      outcome: result.outcome,
      stdout: output.stdout.toString('utf8'),
      stderr: output.stderr.toString('utf8'),
    };
  } finally {
    journal.close();
  }
}

test('an executable the suite writes to scratch runs (exit 0, not 126), through HOME and TMPDIR', async () => {
  const script = [
    'echo "HOME=$HOME TMPDIR=$TMPDIR"',
    'printf "#!/bin/sh\\necho direct\\n" > /tmp/direct.sh && chmod 755 /tmp/direct.sh && /tmp/direct.sh; echo "direct-exit=$?"',
    'printf "#!/bin/sh\\necho built-and-ran\\n" > "$TMPDIR/built.sh"',
    'chmod 755 "$TMPDIR/built.sh"',
    '"$TMPDIR/built.sh"; echo "tmp-exit=$?"',
    'mkdir -p "$HOME/.cache/tool" && cp "$TMPDIR/built.sh" "$HOME/.cache/tool/run" && "$HOME/.cache/tool/run"; echo "home-exit=$?"',
  ].join('; ');
  const ran = await run({ argv: ['/bin/sh', '-c', script] });
  assert.equal(ran.state, 'succeeded', ran.stderr);
  assert.match(ran.stdout, /^HOME=\/tmp TMPDIR=\/tmp$/m);
  assert.match(
    ran.stdout,
    /^direct-exit=0$/m,
    `a script in /tmp ran (126 = noexec scratch): ${ran.stdout}${ran.stderr}`,
  );
  assert.match(ran.stdout, /^tmp-exit=0$/m, `the script ran: ${ran.stdout}${ran.stderr}`);
  assert.match(ran.stdout, /^home-exit=0$/m);
  assert.equal(ran.stdout.match(/^built-and-ran$/gm)?.length, 2);
  assert.doesNotMatch(ran.stderr, /Permission denied/);
});

test('a recipe that names HOME or TMPDIR keeps its own values', async () => {
  const ran = await run({
    argv: ['/bin/sh', '-c', 'echo "HOME=$HOME TMPDIR=$TMPDIR"'],
    env: { HOME: '/tmp/home', TMPDIR: '/tmp/t' },
  });
  assert.equal(ran.state, 'succeeded', ran.stderr);
  assert.match(ran.stdout, /^HOME=\/tmp\/home TMPDIR=\/tmp\/t$/m);
});

test('writing beyond scratch_bytes fails, and /dev/shm or /dev/mqueue give no extra space', async () => {
  const budget = 256 * 1024;
  const script = [
    // Fill scratch until the file system refuses; report what it took.
    'dd if=/dev/zero of=/tmp/fill bs=4096 2>/dev/null; echo "fill-exit=$?"; echo "filled=$(wc -c < /tmp/fill)"',
    // Then try every other place a process could keep bytes.
    'if dd if=/dev/zero of=/dev/shm/extra bs=4096 count=16 2>/dev/null; then echo SHM-WRITTEN; fi',
    'if [ -e /dev/shm ]; then echo SHM-EXISTS; fi',
    'if touch /dev/mqueue/extra 2>/dev/null; then echo MQUEUE-CREATED; fi',
  ].join('; ');
  const ran = await run({ argv: ['/bin/sh', '-c', script], limits: { scratch_bytes: budget } });
  assert.equal(ran.state, 'succeeded', ran.stderr);
  assert.match(ran.stdout, /^fill-exit=1$/m, 'dd stopped on a full scratch');
  const filled = /^filled=(\d+)$/m.exec(ran.stdout);
  assert.ok(filled !== null, ran.stdout);
  assert.ok(Number(filled[1]) <= budget, `scratch held ${filled[1]} bytes, more than its ${budget}-byte budget`);
  assert.ok(Number(filled[1]) >= budget / 2, `scratch held only ${filled[1]} bytes of its ${budget}`);
  assert.doesNotMatch(ran.stdout, /SHM-WRITTEN/);
  assert.doesNotMatch(ran.stdout, /SHM-EXISTS/);
  assert.doesNotMatch(ran.stdout, /MQUEUE-CREATED/);
});

test('scratch is the only place in the container where a file can be created or written', async () => {
  // Every directory outside /proc and /sys: try to create a file in it (its mode alone says
  // too little: /dev/mqueue is 1777 but refuses every queue). Every regular file: writable?
  const script = [
    'find / \\( -path /proc -o -path /sys \\) -prune -o -type d -print 2>/dev/null > /tmp/dirs',
    'find / \\( -path /proc -o -path /sys -o -path /tmp \\) -prune -o -type f -print 2>/dev/null > /tmp/files',
    'while read -r d; do if touch "$d/.agentscm-probe" 2>/dev/null; then echo "CREATED:$d"; fi; done < /tmp/dirs',
    'while read -r f; do if [ -w "$f" ]; then echo "WRITABLE:$f"; fi; done < /tmp/files',
    'echo "dirs=$(wc -l < /tmp/dirs)"',
  ].join('; ');
  const ran = await run({ argv: ['/bin/sh', '-c', script] });
  assert.equal(ran.state, 'succeeded', ran.stderr);
  const dirs = /^dirs=(\d+)$/m.exec(ran.stdout);
  assert.ok(dirs !== null && Number(dirs[1]) > 10, `the survey saw the file system: ${ran.stdout}`);
  const found = ran.stdout.split('\n').filter((line) => line.startsWith('CREATED:') || line.startsWith('WRITABLE:'));
  assert.deepEqual(found, ['CREATED:/tmp']);
});
