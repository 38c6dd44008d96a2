/**
 * Run a child process to its end and keep what it printed: for tests that spawn a script or a
 * tool other than the CLI (the CLI itself goes through test/helpers/cli.ts runCli).
 */
import { spawn } from 'node:child_process';

export interface Spawned {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall time from spawn to close. */
  readonly ms: number;
}

/** Spawn `command args` in `cwd` with exactly `env`, no stdin, killed after `timeoutMs`. */
export function spawned(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly timeoutMs?: number },
): Promise<Spawned> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 300_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}
