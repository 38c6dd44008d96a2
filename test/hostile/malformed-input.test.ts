/**
 * The CI sample of the malformed-input campaign (docs/hostile-testing.md): every registered wire
 * type gets FUZZ_RUNS cases (default 1,000) of mutated valid documents, random bytes and random
 * JSON, and must show no crash, no hang, no wrong code and no input wrongly accepted. Then the
 * commands that read a file argument or stdin get malformed contents, directories, empty and
 * oversized files, FIFOs without a writer, devices, /proc files and symlinks through the real
 * CLI: each ends with one `error[CODE]: …` line, the exit status of that code's row in
 * docs/errors.md, and an unchanged data directory.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { cliEntryArgv, REPO_ROOT, TSX_LOADER, type CliResult } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { checkSeeds, failed, reportLines, runCampaign, runsFromEnv, seedFromEnv } from './fuzz/campaign.js';
import { buildCase, MUTATION_KINDS, type FuzzCase } from './fuzz/mutations.js';
import { effectiveExpectation } from './fuzz/oracle.js';
import { uncoveredDecoders, wireTypes, type WireType } from './fuzz/wire-types.js';

const RUNS = runsFromEnv(1000);
const SEED = seedFromEnv();
const TYPES = wireTypes();

test('the campaign covers every registered wire type, and every seed document decodes', () => {
  assert.deepEqual(
    uncoveredDecoders(),
    [],
    'add an entry with valid seed documents for each to test/hostile/fuzz/wire-types.ts',
  );
  assert.ok(TYPES.length >= 20, `only ${TYPES.length} wire types`);
  for (const type of TYPES) {
    assert.ok(type.seeds.length > 0, `${type.id} has no seed`);
    checkSeeds(type);
  }
});

for (const type of TYPES) {
  test(`${type.id}: ${RUNS} malformed inputs, no crash, hang, wrong code or wrongly accepted input (seed ${SEED})`, () => {
    const report = runCampaign(type, RUNS, SEED);
    assert.ok(
      !failed(report),
      `${reportLines(report).join('\n')}\nreplay the whole type with FUZZ_SEED=${SEED} FUZZ_TYPE=${type.id} npm run fuzz`,
    );
    // Every mutation kind was drawn: a generator that never finds a place would test nothing.
    if (RUNS >= 1000)
      for (const kind of [
        'unknown-field',
        'missing-field',
        'wrong-type',
        'duplicate-key',
        'bad-number',
        'random-bytes',
        'random-json',
      ])
        assert.ok((report.kinds[kind] ?? 0) > 0, `${type.id}: no ${kind} case`);
  });
}

// --- the oracle finds what it must (fault injection beside the real decoders) --------------------

function faultyType(decode: (bytes: Uint8Array) => unknown): WireType {
  const real = TYPES.find((t) => t.id === 'agent-task.status-request');
  assert.ok(real !== undefined);
  return { ...real, id: `faulty.${real.id}`, decode };
}

test('the campaign counts a decoder that crashes, accepts everything, reports one fixed code, or stalls', () => {
  const crash = runCampaign(
    faultyType(() => {
      throw new TypeError('boom');
    }),
    50,
    1,
    undefined,
    { checkSeeds: false },
  );
  assert.equal(crash.counts.crash, 50);
  const lax = runCampaign(
    faultyType(() => ({})),
    200,
    1,
    undefined,
    { checkSeeds: false },
  );
  assert.ok(lax.counts['wrongly-accepted'] > 100, reportLines(lax).join('\n'));
  const real = TYPES.find((t) => t.id === 'agent-task.status-request');
  assert.ok(real !== undefined);
  const fixed = runCampaign(
    faultyType((bytes) => {
      try {
        return real.decode(bytes);
      } catch (error) {
        throw error instanceof AgentscmError && error.code === 'SCHEMA_UNKNOWN_FIELD'
          ? new AgentscmError('SCHEMA_TYPE', 'unknown field reported as a type error')
          : error;
      }
    }),
    300,
    1,
  );
  assert.ok(fixed.counts['wrong-code'] > 0 && fixed.counts.crash === 0, reportLines(fixed).join('\n'));
  assert.ok(fixed.failures.some((f) => f.kind === 'unknown-field' && f.got === 'SCHEMA_TYPE'));
  assert.match(fixed.counterexample?.replay ?? '', /^FUZZ_TYPE=\S+ FUZZ_SEED=1 FUZZ_PATH=[0-9:]+ npm run fuzz$/);
  let calls = 0;
  const slow = runCampaign(
    faultyType((bytes) => {
      // One case of the campaign (not the seed check before it) takes longer than the bound.
      if (++calls === 5) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2100);
      }
      return real.decode(bytes);
    }),
    20,
    1,
  );
  assert.equal(slow.counts.hang, 1, reportLines(slow).join('\n'));
});

// --- the file-reading commands through the real CLI ----------------------------------------------

/** Exit status of every code, from the rows of docs/errors.md. */
function documentedExits(): Map<string, number> {
  const rows = new Map<string, number>();
  for (const match of readFileSync(join(REPO_ROOT, 'docs', 'errors.md'), 'utf8').matchAll(
    /^\| `([A-Z0-9_]+)` \| (\d) \|/gm,
  ))
    rows.set(match[1] as string, Number(match[2]));
  return rows;
}

/** Every file under dir with its size and SHA-256: a data directory before and after a command. */
/**
 * Every file of a data directory with its size and SHA-256. SQLite's own sidecars of a WAL
 * database that a reader opened — the shared-memory index and an empty write-ahead log — hold no
 * data and are left out; a write-ahead log with frames in it is a change and stays in.
 */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const stat = statSync(full);
      if (name.endsWith('.sqlite-shm') || (name.endsWith('.sqlite-wal') && stat.size === 0)) continue;
      if (stat.isDirectory()) visit(full);
      else
        out[full.slice(dir.length)] = `${stat.size} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
    }
  };
  visit(dir);
  return out;
}

const PUBLIC_KEY = 'a'.repeat(64);

interface Reader {
  readonly name: string;
  /** The wire type its file holds. */
  readonly type: string;
  /** Arguments with FILE where the file goes. */
  readonly args: readonly string[];
  readonly stdin: boolean;
}

const READERS: readonly Reader[] = [
  {
    name: 'skill-workflow plan',
    type: 'skill-workflow-definition',
    args: ['skill-workflow', 'plan', 'FILE'],
    stdin: false,
  },
  {
    name: 'skill-workflow run',
    type: 'skill-workflow-definition',
    args: ['skill-workflow', 'run', 'run-1', 'FILE'],
    stdin: false,
  },
  {
    name: 'requirement install',
    type: 'skill-workflow-definition',
    args: ['requirement', 'install', '--target', 'main', 'FILE'],
    stdin: false,
  },
  {
    name: 'agent-task call --input',
    type: 'agent-task.claim-request',
    args: ['agent-task', 'call', 'claim', '--token-file', 'TOKENFILE', '--input', 'FILE'],
    stdin: true,
  },
  {
    name: 'agent-task observation-digest',
    type: 'agent-task.task-result-assertion',
    args: ['agent-task', 'observation-digest', 'FILE'],
    stdin: true,
  },
  {
    name: 'agent-task sign-observation',
    type: 'agent-task.task-result-assertion',
    args: ['agent-task', 'sign-observation', 'FILE', '--key', 'KEYFILE'],
    stdin: true,
  },
  {
    name: 'agent-task verify-observation',
    type: 'agent-task.task-result-assertion',
    args: ['agent-task', 'verify-observation', 'FILE', '--public-key', PUBLIC_KEY],
    stdin: true,
  },
];

/** What one hostile input must give (docs/cli.md "File arguments and stdin", docs/strict-json.md). */
interface Hostile {
  readonly what: string;
  readonly path: string;
  readonly code: string;
  readonly stdinBytes?: Uint8Array;
}

const CLI_TIMEOUT_MS = 30_000;

interface Job {
  readonly reader: Reader;
  readonly hostile: Hostile;
  /** Run as a process of its own (every stdin case, and one file per command). */
  readonly spawn: boolean;
}

const BATCH = join(REPO_ROOT, 'test', 'hostile', 'fuzz', 'cli-batch.ts');

/**
 * Spawn node with these arguments (the batch script through tsx, or one agentscm invocation). A command may stop
 * reading stdin once it has refused the input (more than the limit): the EPIPE of the rest of
 * the write is expected, not a failure.
 */
function runNode(argv: readonly string[], timeoutMs: number, input?: Uint8Array): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({
        code,
        signal,
        stdout: stdoutBytes.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        stdoutBytes,
      });
    });
    child.stdin.end(input === undefined ? '' : Buffer.from(input));
  });
}

/**
 * Run argument lists through one batch process; an invocation that does not finish within
 * CLI_TIMEOUT_MS is a hang (its result has signal SIGTERM) and the batch goes on after it.
 */
async function runBatched(argvs: readonly string[][], dir: string): Promise<Map<number, CliResult>> {
  mkdirSync(dir, { recursive: true });
  const results = new Map<number, CliResult>();
  let from = 0;
  for (let round = 0; from < argvs.length; round++) {
    const jobsFile = join(dir, `jobs-${round}.json`);
    const resultsFile = join(dir, `results-${round}.jsonl`);
    writeFileSync(jobsFile, JSON.stringify(argvs.slice(from)));
    writeFileSync(resultsFile, '');
    const batch = await runNode(['--import', TSX_LOADER, BATCH, jobsFile, resultsFile], CLI_TIMEOUT_MS * 4);
    let started = -1;
    for (const line of readFileSync(resultsFile, 'utf8').split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as {
        index: number;
        started?: true;
        exit?: number;
        stderr?: string;
        stdout?: string;
      };
      if (row.started === true) started = row.index;
      else
        results.set(from + row.index, {
          code: row.exit ?? null,
          signal: null,
          stdout: row.stdout ?? '',
          stderr: row.stderr ?? '',
          stdoutBytes: Buffer.from(row.stdout ?? ''),
        });
    }
    if (started < 0) throw new Error(`the batch did not start: exit ${String(batch.code)}\n${batch.stderr}`);
    const stuck = from + started;
    if (results.has(stuck)) {
      if (started !== argvs.length - from - 1)
        throw new Error(`the batch stopped after invocation ${stuck}: exit ${String(batch.code)}\n${batch.stderr}`);
      break;
    }
    results.set(stuck, {
      code: null,
      signal: 'SIGTERM',
      stdout: '',
      stderr: batch.stderr,
      stdoutBytes: Buffer.alloc(0),
    });
    from = stuck + 1;
  }
  return results;
}

function assertRefused(result: CliResult, hostile: Hostile, reader: Reader, exits: Map<string, number>): void {
  const context = `${reader.name} with ${hostile.what}: exit ${String(result.code)} signal ${String(result.signal)}\nstderr: ${result.stderr}`;
  assert.notEqual(result.signal, 'SIGTERM', `hang (no answer within ${CLI_TIMEOUT_MS} ms): ${context}`);
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `one line on stderr: ${context}`);
  const match = /^error\[([A-Z0-9_]+)\]: \S/.exec(lines[0] as string);
  assert.ok(match !== null, `error[CODE]: on stderr: ${context}`);
  const code = match[1] as string;
  assert.notEqual(code, 'INTERNAL', context);
  assert.ok(exits.has(code), `${code} has a row in docs/errors.md: ${context}`);
  assert.equal(result.code, exits.get(code), `exit status of ${code} in docs/errors.md: ${context}`);
  assert.equal(code, hostile.code, context);
}

/** A few generated malformed documents of a type, each with the code the oracle predicts. */
function generatedCases(type: WireType, count: number, seed: number): FuzzCase[] {
  const out: FuzzCase[] = [];
  const kinds = MUTATION_KINDS.filter(
    (k) => !['whitespace', 'reordered', 'escaped', 'bound-at', 'oversize'].includes(k),
  );
  for (let i = 0; out.length < count && i < 1000; i++) {
    const kind = kinds[(seed + i) % kinds.length] as (typeof kinds)[number];
    const c = buildCase(type, { kind, seed: seed + i, pick: seed * 7 + i * 13, variant: seed + i * 5 });
    if (c !== undefined && effectiveExpectation(type, c).outcome === 'refuse') out.push(c);
  }
  return out;
}

test(
  'the file-reading commands refuse hostile files and stdin with a documented code and change nothing',
  { timeout: 15 * 60_000 },
  async (t) => {
    const exits = documentedExits();
    // A repository with a Change and no requirement (test/helpers/scenario.ts); agent-task call runs
    // as the actor of a live grant: a real one, so that the input is what is refused.
    const { root, dataDir, tokenFile } = await buildScenario(t, {
      command: false,
      requirement: false,
      enrollStep: null,
    });
    const before = snapshot(dataDir);

    const files = join(root, 'files');
    mkdirSync(files);
    const write = (name: string, content: string | Uint8Array): string => {
      const path = join(files, name);
      writeFileSync(path, content);
      return path;
    };
    const duplicate = write('duplicate.json', '{"version":1,"a":1,"a":2}');
    const fifo = join(files, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const linkToDuplicate = join(files, 'link.json');
    symlinkSync(duplicate, linkToDuplicate);
    const dangling = join(files, 'dangling.json');
    symlinkSync(join(files, 'absent.json'), dangling);
    const loop = join(files, 'loop.json');
    symlinkSync(loop, loop);
    const linkToDir = join(files, 'dir-link');
    symlinkSync(files, linkToDir);
    const keyFile = write('key.json', '{"version":1}');

    const environment: Hostile[] = [
      { what: 'an empty file', path: write('empty.json', ''), code: 'JSON_SYNTAX' },
      {
        what: 'a file of 17 MiB',
        path: write('big.json', Buffer.alloc(17 * 1024 * 1024, 0x20)),
        code: 'INPUT_TOO_LARGE',
      },
      { what: 'a directory', path: files, code: 'INPUT_NOT_REGULAR_FILE' },
      { what: 'a symlink to a directory', path: linkToDir, code: 'INPUT_NOT_REGULAR_FILE' },
      { what: 'a FIFO with no writer', path: fifo, code: 'INPUT_NOT_REGULAR_FILE' },
      { what: '/dev/zero', path: '/dev/zero', code: 'INPUT_NOT_REGULAR_FILE' },
      // A /proc file reports size 0 and is read to its end: its text is not JSON.
      { what: '/proc/self/status', path: '/proc/self/status', code: 'JSON_SYNTAX' },
      { what: '/proc/self/mem (EIO on read)', path: '/proc/self/mem', code: 'IO_ERROR' },
      { what: 'a symlink to a file with a duplicate key', path: linkToDuplicate, code: 'JSON_DUPLICATE_KEY' },
      // docs/cli.md "File arguments and stdin": a path that names no existing file is INPUT_NOT_FOUND.
      { what: 'a dangling symlink', path: dangling, code: 'INPUT_NOT_FOUND' },
      { what: 'a symlink loop', path: loop, code: 'IO_ERROR' },
      { what: 'a file that does not exist', path: join(files, 'absent.json'), code: 'INPUT_NOT_FOUND' },
    ];

    const jobs: Job[] = [];
    for (const [index, reader] of READERS.entries()) {
      const type = TYPES.find((x) => x.id === reader.type);
      assert.ok(type !== undefined, reader.type);
      for (const hostile of environment) jobs.push({ reader, hostile, spawn: false });
      for (const [n, c] of generatedCases(type, 4, SEED + index).entries()) {
        const expect = effectiveExpectation(type, c);
        assert.ok(expect.outcome === 'refuse');
        const path = write(`generated-${index}-${n}.json`, c.bytes);
        // The first generated file of each command also goes through a process of its own (bin/dev.js).
        jobs.push({ reader, hostile: { what: `[${c.kind}] ${c.what}`, path, code: expect.code }, spawn: n === 0 });
        if (reader.stdin && n === 0)
          jobs.push({
            reader,
            hostile: { what: `stdin: [${c.kind}] ${c.what}`, path: '-', code: expect.code, stdinBytes: c.bytes },
            spawn: true,
          });
      }
    }
    const argsOf = ({ reader, hostile }: Job): string[] => [
      '--data-dir',
      dataDir,
      ...reader.args.map((a) =>
        a === 'FILE' ? hostile.path : a === 'KEYFILE' ? keyFile : a === 'TOKENFILE' ? tokenFile : a,
      ),
    ];

    const failures: string[] = [];
    const check = (job: Job, result: CliResult): void => {
      try {
        assertRefused(result, job.hostile, job.reader, exits);
      } catch (error) {
        failures.push((error as Error).message);
      }
    };
    // Most cases run in one process through the CLI entry (test/hostile/fuzz/cli-batch.ts).
    const batched = jobs.filter((j) => !j.spawn);
    for (const [job, result] of await runBatched(batched.map(argsOf), join(root, 'batch')))
      check(batched[job] as Job, result);
    for (const job of jobs.filter((j) => j.spawn)) {
      check(job, await runNode([...cliEntryArgv(), ...argsOf(job)], CLI_TIMEOUT_MS, job.hostile.stdinBytes));
    }
    assert.ok(existsSync(dataDir));
    assert.deepEqual(snapshot(dataDir), before, 'the data directory changed');
    assert.deepEqual(
      failures,
      [],
      `${failures.length} of ${jobs.length} hostile inputs were not refused as documented:\n${failures.join('\n\n')}`,
    );
  },
);
