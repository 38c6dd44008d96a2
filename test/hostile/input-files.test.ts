/**
 * Reproducers for the inputs named on the command line (docs/cli.md "File arguments and
 * stdin"): a FIFO with no writer, /proc/self/mem, a directory and a name with a newline, given
 * to every command that reads a file argument, and a non-blocking stdin that has no data yet.
 * All go through the one bounded reader (src/native/bounded-input.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';
import { pathToFileURL } from 'node:url';

import { observationDigest } from '../../src/contracts/collector/observation.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { isJsonObject } from '../../src/contracts/json/json-value.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { assertionToJson, taskResultAssertionDecoder } from '../../src/contracts/task/result.js';
import { readBoundedInput } from '../../src/native/bounded-input.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, TSX_LOADER } from '../helpers/cli.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';

const golden = parseStrictJson(readFileSync(join(REPO_ROOT, 'test', 'vectors', 'observation-golden-v1.json')), {
  maxBytes: 1 << 20,
});
assert.ok(isJsonObject(golden));
const PUBLIC_KEY = golden.public_key_hex as string;

/** Every command that reads a file argument, with FILE in the place of the argument. */
const READERS: readonly (readonly string[])[] = [
  ['skill-workflow', 'plan', 'FILE'],
  ['skill-workflow', 'run', 'run-1', 'FILE'],
  ['requirement', 'install', '--target', 'main', 'FILE'],
  ['agent-task', 'call', 'capabilities', '--token-file', 'missing.token', '--input', 'FILE'],
  ['agent-task', 'observation-digest', 'FILE'],
  ['agent-task', 'sign-observation', 'FILE', '--key', 'missing-key.json'],
  ['agent-task', 'verify-observation', 'FILE', '--public-key', PUBLIC_KEY],
  ['agent-task', 'transfer', 'show', 'FILE'],
  ['receipt', 'verify', 'FILE'],
];

function argsWith(command: readonly string[], file: string, dataDir: string): string[] {
  return ['--data-dir', dataDir, ...command.map((a) => (a === 'FILE' ? file : a)), '--json'];
}

function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

async function expectEveryReader(t: test.TestContext, file: string, code: string, message: RegExp): Promise<void> {
  const dataDir = join(tempDir(t), 'data');
  for (const command of READERS) {
    // A reader that waits on the FIFO would be killed by the timeout (code null) and fail here.
    const result = await runCli(argsWith(command, file, dataDir), { timeoutMs: 60_000 });
    const label = command.slice(0, 2).join(' ');
    assert.equal(result.signal, null, `${label} did not finish`);
    assert.equal(jsonOf<{ error: { code: string } }>(result).error.code, code, `${label}: ${result.stderr}`);
    assert.equal(result.code, code === 'IO_ERROR' ? 4 : 2, label);
    assert.match(result.stderr, message, label);
    assert.equal(result.stderr.split('\n').length, 2, `${label} prints one line: ${result.stderr}`);
  }
}

test('a FIFO with no writer is refused as not a regular file by every command that reads a file, without waiting', async (t) => {
  const fifo = join(tempDir(t), 'input.fifo');
  mkfifo(fifo);
  await expectEveryReader(
    t,
    fifo,
    'INPUT_NOT_REGULAR_FILE',
    /^error\[INPUT_NOT_REGULAR_FILE\]: the [a-z ]+ ".*input\.fifo" is a FIFO, not a regular file; it was not read/,
  );
});

test('a directory is refused with the same code by every reader', async (t) => {
  const dir = tempDir(t);
  await expectEveryReader(t, dir, 'INPUT_NOT_REGULAR_FILE', /is a directory, not a regular file/);
});

test('/proc/self/mem is IO_ERROR in every reader (a read failure is never INTERNAL)', async (t) => {
  await expectEveryReader(
    t,
    '/proc/self/mem',
    'IO_ERROR',
    /^error\[IO_ERROR\]: cannot read the [a-z ]+ "\/proc\/self\/mem": input\/output error \(EIO\)/,
  );
});

test('a file name with a newline and an escape sequence is shown escaped, on one line', async (t) => {
  const file = join(tempDir(t), 'evil\nerror[OK]: \u001b[2Jfine');
  await expectEveryReader(
    t,
    file,
    'INPUT_NOT_FOUND',
    /"[^"\n]*evil\\nerror\[OK\]: \\u001b\[2Jfine" does not exist; nothing was read; [^\n]*\n$/,
  );
});

test('the reader refuses a FIFO even when a writer has data ready, and takes - as a file name unless stdin is allowed', (t) => {
  const fifo = join(tempDir(t), 'ready.fifo');
  mkfifo(fifo);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY);
  t.after(() => {
    closeSync(writer);
    closeSync(reader);
  });
  writeSync(writer, '{}');
  assert.equal(
    codeOf(() => readBoundedInput(fifo, { limit: 10, what: 'the input' })),
    'INPUT_NOT_REGULAR_FILE',
  );
  // Without the stdin option, "-" is a file name like any other.
  const cwd = process.cwd();
  process.chdir(tempDir(t));
  try {
    assert.equal(
      codeOf(() => readBoundedInput('-', { limit: 10, what: 'the input' })),
      'INPUT_NOT_FOUND',
    );
  } finally {
    process.chdir(cwd);
  }
});

test('a regular file at the bound is read; one byte more is INPUT_TOO_LARGE, also when the size is not known in advance', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'at'), Buffer.alloc(16, 0x20));
  writeFileSync(join(dir, 'past'), Buffer.alloc(17, 0x20));
  assert.equal(readBoundedInput(join(dir, 'at'), { limit: 16, what: 'the input' }).byteLength, 16);
  assert.equal(
    codeOf(() => readBoundedInput(join(dir, 'past'), { limit: 16, what: 'the input' })),
    'INPUT_TOO_LARGE',
  );
  // /proc files report size 0: the read itself is bounded.
  assert.equal(
    codeOf(() => readBoundedInput('/proc/self/maps', { limit: 16, what: 'the input' })),
    'INPUT_TOO_LARGE',
  );
});

interface NonBlockingStdin {
  readonly stdinFd: number;
  /** Set O_NONBLOCK on the pipe's open file description, which the child shares as its stdin. */
  makeNonBlocking(): void;
  /** Write the data, then close the writer. */
  feed(data: Buffer): void;
}

/**
 * A FIFO to give a child as stdin. The child's runtime clears O_NONBLOCK on its stdio when it
 * starts, so the flag is set after the spawn, through the shared open file description: wrapping
 * the parent's descriptor in a net.Socket makes libuv set it (as a shell or agent that polls the
 * same pipe would).
 */
function nonBlockingStdin(t: test.TestContext): NonBlockingStdin {
  const fifo = join(tempDir(t), 'stdin.fifo');
  mkfifo(fifo);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  let writer: number | null = openSync(fifo, constants.O_WRONLY);
  let socket: Socket | null = null;
  const closeWriter = (): void => {
    if (writer !== null) closeSync(writer);
    writer = null;
  };
  t.after(() => {
    closeWriter();
    // The socket owns the reader once it exists.
    if (socket === null) closeSync(reader);
    else socket.destroy();
  });
  return {
    stdinFd: reader,
    makeNonBlocking(): void {
      socket ??= new Socket({ fd: reader, readable: false, writable: false });
    },
    feed(data: Buffer): void {
      if (writer !== null) writeSync(writer, data);
      closeWriter();
    },
  };
}

interface ChildResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawn node with `args` and the given stdin fd; feed it `data` once `delayMs` passed after `ready` shows on stderr. */
function runWithLateStdin(
  stdin: NonBlockingStdin,
  args: readonly string[],
  data: Buffer,
  ready: RegExp,
  delayMs: number,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      stdio: [stdin.stdinFd, 'pipe', 'pipe'],
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    let fed = false;
    const feed = (): void => {
      if (fed) return;
      fed = true;
      setTimeout(() => stdin.feed(data), delayMs);
    };
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (ready.test(stderr)) feed();
    });
    child.on('spawn', () => stdin.makeNonBlocking());
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (ready.source === '^') feed();
  });
}

test('a non-blocking stdin without data is waited for without spinning on EAGAIN', async (t) => {
  const stdin = nonBlockingStdin(t);
  const reader = pathToFileURL(join(REPO_ROOT, 'src', 'native', 'bounded-input.ts')).href;
  const script = `
    import { readBoundedInput } from ${JSON.stringify(reader)};
    process.stderr.write('reading\\n');
    const before = process.cpuUsage();
    const started = Date.now();
    const bytes = readBoundedInput('-', { limit: 1024, what: 'the input', stdin: true });
    const used = process.cpuUsage(before);
    process.stdout.write(JSON.stringify({ text: bytes.toString(), cpuMs: (used.user + used.system) / 1000, wallMs: Date.now() - started }));
  `;
  const result = await runWithLateStdin(
    stdin,
    ['--import', TSX_LOADER, '--input-type=module', '-e', script],
    Buffer.from('late data'),
    /reading\n/,
    2000,
  );
  assert.equal(result.code, 0, result.stderr);
  const out = JSON.parse(result.stdout) as { text: string; cpuMs: number; wallMs: number };
  assert.equal(out.text, 'late data');
  assert.ok(out.wallMs >= 1900, `the read returned before the data was written (${out.wallMs} ms)`);
  // Spinning on EAGAIN burns the whole wait (about 2000 ms of CPU); sleeping between tries costs a few ms.
  assert.ok(out.cpuMs < 150, `reading a non-blocking stdin used ${out.cpuMs} ms of CPU over ${out.wallMs} ms`);
});

test('observation-digest reads a non-blocking stdin whose data arrives late', async (t) => {
  const stdin = nonBlockingStdin(t);
  const assertion = taskResultAssertionDecoder.validate(golden.assertion_unsigned ?? null);
  const unsigned = encodeCanonical(assertionToJson(assertion));
  const expected = observationDigest(assertion);
  const result = await runWithLateStdin(
    stdin,
    [...cliEntryArgv(), 'agent-task', 'observation-digest', '-', '--json'],
    unsigned,
    /^/,
    2000,
  );
  assert.equal(result.code, 0, result.stderr);
  assert.equal((JSON.parse(result.stdout) as { digest: string }).digest, expected);
});
