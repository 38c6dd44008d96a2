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
  /** `dev` (default): the sources through tsx; `built`: bin/run.js over dist/. */
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
  const env: Record<string, string | undefined> = { ...process.env, AGENTSCM_DATA_DIR: undefined, XDG_DATA_HOME: TEST_XDG_DATA_HOME, ...options.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return new Promise((resolve, reject) => {
    const argv = options.entry === 'built' ? [BUILT_BIN, ...args] : ['--import', TSX_LOADER, DEV_BIN, ...args];
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
      resolve({ code, signal, stdout: stdoutBytes.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), stdoutBytes });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Parse the single JSON document a --json command wrote to stdout. */
export function jsonOf<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${String(result.code)}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}
