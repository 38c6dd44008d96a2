/**
 * Run the agentscm CLI as a user would: a real child process of bin/dev.js (the TypeScript
 * sources through tsx) or, with `entry: 'built'`, of bin/run.js (the bundle in dist/ that
 * `npm run build` makes), with its own environment, stdin and exit status.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEV_BIN = join(REPO_ROOT, 'bin', 'dev.js');
export const BUILT_BIN = join(REPO_ROOT, 'bin', 'run.js');
/** tsx's loader by absolute URL: `--import tsx` would resolve from the child's working directory. */
export const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/**
 * The CLI the tests spawn by default. `npm test` builds dist/ first and sets
 * AGENTSCM_TEST_CLI=built, so the suite runs the bundle users run (a process starts in about a
 * sixth of the time the sources through tsx take). Unset, a test run on its own spawns the
 * sources, so that it needs no build and tests the code as edited.
 */
export const TEST_CLI: 'dev' | 'built' = process.env.AGENTSCM_TEST_CLI === 'built' ? 'built' : 'dev';

/** The node arguments before agentscm's own for an entry (default: TEST_CLI). */
export function cliEntryArgv(entry: 'dev' | 'built' = TEST_CLI): string[] {
  return entry === 'built' ? [BUILT_BIN] : ['--import', TSX_LOADER, DEV_BIN];
}

/** `node` plus the entry, relative to the repository root: for scripts that take AGENTSCM_BIN. */
export const CLI_COMMAND = TEST_CLI === 'built' ? 'node bin/run.js' : 'node --import tsx bin/dev.js';

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: Buffer;
}

export interface CliOptions {
  readonly cwd?: string;
  readonly env?: Record<string, string | undefined>;
  readonly input?: string | Buffer;
  readonly timeoutMs?: number;
  /** `dev`: the sources through tsx; `built`: bin/run.js over dist/; default TEST_CLI. */
  readonly entry?: 'dev' | 'built';
}

/**
 * The per-user default store of a command run with no --data-dir, no AGENTSCM_DATA_DIR and no
 * enclosing workspace ($XDG_DATA_HOME/agentscm): a directory of this test process, never the
 * home directory of whoever runs the tests.
 */
export const TEST_XDG_DATA_HOME = join(tmpdir(), `agentscm-test-xdg-${process.pid}`);

/**
 * Spawn `agentscm ...args` and collect its output. AGENTSCM_DATA_DIR is cleared and
 * XDG_DATA_HOME points at TEST_XDG_DATA_HOME unless the options give them.
 */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    AGENTSCM_DATA_DIR: undefined,
    XDG_DATA_HOME: TEST_XDG_DATA_HOME,
    ...options.env,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return new Promise((resolve, reject) => {
    const argv = [...cliEntryArgv(options.entry), ...args];
    const child = spawn(process.execPath, argv, {
      cwd: options.cwd ?? REPO_ROOT,
      env: env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 120_000,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
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
    child.stdin.end(options.input ?? '');
  });
}

/** Parse the single JSON document a --json command wrote to stdout. */
export function jsonOf<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(
      `stdout is not one JSON document (exit ${String(result.code)}):\n${result.stdout}\nstderr:\n${result.stderr}`,
    );
  }
}
