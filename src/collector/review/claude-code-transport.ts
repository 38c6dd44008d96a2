/**
 * The Claude Code review transport (docs/review.md "The Claude Code transport"): the production
 * review collector accepts only this concrete transport, built from an operator-selected
 * executable and a private working directory. It runs the executable non-interactively (print
 * mode, JSON output, one turn, no tools, no MCP servers) with only the environment the operator
 * names and the canonical request on stdin; the executable's bytes are hashed before and after
 * every dispatch, and a change makes the call `executable_changed`.
 */
import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { isAbsolute } from 'node:path';

import { AgentscmError } from '../../contracts/errors.js';
import { MAX_OBSERVATION_DETAIL_BYTES, type ReviewCallObservation } from '../../contracts/review/record.js';
import { validateTransportIdentity } from '../../contracts/review/request.js';
import { createSha256, sha256Hex } from '../../crypto/sha256.js';
import { ensurePrivateDir } from '../snapshot.js';
import type { ReviewDispatch, ReviewTransport } from './controller.js';

/** Said before the request on stdin: what the answer must be (the request names its format). */
export const CLAUDE_CODE_PREAMBLE = [
  'You are a code reviewer. The JSON document after this paragraph is a review request: judge every excerpt ' +
    'against every criterion.',
  'Answer with exactly one JSON object and nothing else (no prose, no code fence): ' +
    '{"version":1,"verdicts":[{"criterion":ID,"verdict":"pass"|"fail"}, one per criterion in the request\'s ' +
    'order],',
  '"findings":[{"criterion":ID,"path":PATH,"line":N|null,"severity":"blocking"|"advisory","message":TEXT}]}, at ' +
    "most 16 findings, each naming a path of the request's excerpts.",
  '',
].join('\n');

/** The argv after the executable (docs/review.md "Pointing the transport at a real `claude`"). */
export function claudeCodeArguments(model: string): string[] {
  return [
    '--print',
    '--output-format',
    'json',
    '--model',
    model,
    '--max-turns',
    '1',
    '--tools',
    '',
    '--strict-mcp-config',
  ];
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const MAX_STDERR_BYTES = 4096;
const HASH_CHUNK = 1024 * 1024;

/** Process groups of calls in flight: ended if this process exits while a call runs. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killProcessGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already empty.
  }
}

function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) killProcessGroup(group);
    });
  }
  liveGroups.add(pid);
}

function invalid(message: string, hint: string): AgentscmError {
  return new AgentscmError('REVIEW_TRANSPORT_INVALID', message, { hint });
}

function detail(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= MAX_OBSERVATION_DETAIL_BYTES) return text;
  return (
    bytes
      .subarray(0, MAX_OBSERVATION_DETAIL_BYTES - 3)
      .toString('utf8')
      .replace(/\uFFFD$/, '') + '...'
  );
}

/** SHA-256 of a regular file's bytes, read in chunks; null when it is gone or not a regular file. */
export function hashExecutable(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const hash = createSha256();
    const buffer = Buffer.allocUnsafe(HASH_CHUNK);
    for (;;) {
      const n = readSync(fd, buffer, 0, HASH_CHUNK, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
    return hash.digest('hex');
  } finally {
    closeSync(fd);
  }
}

/** The named variables of `from`, and only those (a name that is not set is left out). */
export function pickEnvironment(
  names: readonly string[],
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    if (!ENV_NAME.test(name))
      throw invalid(
        `environment name ${JSON.stringify(name.slice(0, 80))} is not a variable name`,
        'name variables as [A-Za-z_][A-Za-z0-9_]*',
      );
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

export interface ClaudeCodeTransportOptions {
  /** Absolute path of the operator-selected executable (e.g. the `claude` binary). */
  readonly executable: string;
  /** Owner-private (0700) working directory the executable runs in; it sees no source. */
  readonly workDir: string;
  /** The complete environment of the executable: exactly what the operator names. */
  readonly env: Readonly<Record<string, string>>;
  readonly model: string;
  readonly providerScope: string;
}

/** How a Claude Code print-mode JSON result is read (docs/review.md "The Claude Code transport"). */
function readResult(stdout: Buffer): { ok: true; result: string } | { ok: false; why: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(stdout);
  } catch {
    return { ok: false, why: 'the output is not UTF-8' };
  }
  // The CLI's own envelope carries floating-point cost and timing figures, which the strict
  // decoder refuses by design; it comes from the pinned, hashed executable and only its type,
  // is_error and result members are read. The model's answer inside `result` is decoded strictly
  // by the controller.
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, why: 'the output is not Claude Code JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, why: 'the output is not a JSON object' };
  const envelope = value as Record<string, unknown>;
  if (envelope.type !== 'result') return { ok: false, why: 'the output is not a result object' };
  if (envelope.is_error !== false)
    return { ok: false, why: `the result reports an error (${String(envelope.subtype).slice(0, 64)})` };
  if (typeof envelope.result !== 'string' || !envelope.result.isWellFormed())
    return { ok: false, why: 'the result holds no answer text' };
  return { ok: true, result: envelope.result };
}

/**
 * The Claude Code transport: the executable's bytes are hashed now (the identity's
 * executable_sha256) and before and after every dispatch.
 */
export function createClaudeCodeTransport(options: ClaudeCodeTransportOptions): ReviewTransport {
  if (!isAbsolute(options.executable))
    throw invalid(
      `the review executable ${JSON.stringify(options.executable.slice(0, 200))} is not an absolute path`,
      'name the executable by its absolute path, e.g. $(command -v claude)',
    );
  let stats;
  try {
    stats = lstatSync(options.executable);
  } catch (error) {
    throw invalid(
      `cannot inspect the review executable ${options.executable}: ` +
        `${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      'name an existing executable file',
    );
  }
  if (!stats.isFile() || (stats.mode & 0o111) === 0)
    throw invalid(
      `the review executable ${options.executable} is not a regular executable file (a symlink is not followed)`,
      'name the resolved executable file itself',
    );
  let workDir: string;
  try {
    workDir = ensurePrivateDir(options.workDir);
  } catch (error) {
    throw invalid(
      `the review working directory is not usable: ${(error as Error).message}`,
      'use a directory of its own, owned by you with mode 0700, outside every workspace',
    );
  }
  for (const name of Object.keys(options.env)) pickEnvironment([name], options.env);
  const pinned = hashExecutable(options.executable);
  if (pinned === null)
    throw invalid(`cannot read the review executable ${options.executable}`, 'name a readable executable file');
  const identity = validateTransportIdentity({
    basis: 'claude-code',
    executable_sha256: pinned,
    provider_scope: options.providerScope,
    model: options.model,
  });
  const args = claudeCodeArguments(identity.model);
  const env = { ...options.env };

  const dispatch = (call: ReviewDispatch): Promise<ReviewCallObservation> => {
    const before = hashExecutable(options.executable);
    const base = {
      exit_code: null,
      executable_before: before,
      response: null,
      response_sha256: null,
      response_bytes: 0,
    } as const;
    if (before !== pinned) {
      return Promise.resolve({
        ...base,
        status: 'executable_changed',
        elapsed_ms: 0,
        executable_after: null,
        detail: 'the executable bytes changed before the call; it was not run',
      });
    }
    const started = performance.now();
    // The envelope escapes the answer (at most 6 bytes per byte) and adds a few KiB of fields.
    const stdoutCap = call.maxResponseBytes * 6 + 64 * 1024;
    return new Promise((resolve) => {
      // Its own process group (detached: a new session): a timeout, the output limit and the
      // executable's own exit end every process still in the group, so no descendant outlives
      // the call (docs/review.md "The Claude Code transport").
      const child = spawn(options.executable, args, {
        cwd: workDir,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      let stdoutBytes = 0;
      let stderrBytes = 0;
      let spawnError: string | null = null;
      let exitCode: number | null = null;
      let settled = false;
      const group = child.pid;
      if (group !== undefined) trackGroup(group);
      const killGroup = (): void => {
        if (group === undefined) return;
        killProcessGroup(group);
        liveGroups.delete(group);
      };
      const settle = (
        observation: (common: {
          exit_code: number | null;
          elapsed_ms: number;
          executable_after: string | null;
        }) => ReviewCallObservation,
      ): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const elapsed = Math.round(performance.now() - started);
        const after = hashExecutable(options.executable);
        const common = { elapsed_ms: elapsed, executable_after: after, exit_code: exitCode };
        if (after !== pinned) {
          resolve({
            ...base,
            ...common,
            status: 'executable_changed',
            detail: 'the executable bytes changed during the call; its answer is not used',
          });
          return;
        }
        resolve(observation(common));
      };
      // A timeout or the output limit ends the call at once: the group is killed and the call
      // resolves without waiting for pipes a descendant outside the group may still hold open.
      const abort = (status: 'timed_out' | 'output_limit'): void => {
        killGroup();
        child.stdout.destroy();
        child.stderr.destroy();
        child.stdin.destroy();
        settle((common) => ({
          ...base,
          ...common,
          status,
          detail:
            status === 'timed_out'
              ? `no answer within ${call.timeoutMs} ms; the process group was killed`
              : `more than ${stdoutCap} bytes of output; the process group was killed`,
        }));
      };
      const timer = setTimeout(() => abort('timed_out'), call.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => {
        stdoutBytes += chunk.length;
        if (stdoutBytes > stdoutCap) abort('output_limit');
        else stdout.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (stderrBytes < MAX_STDERR_BYTES) stderr.push(chunk.subarray(0, MAX_STDERR_BYTES - stderrBytes));
        stderrBytes += chunk.length;
      });
      child.stdout.on('error', () => undefined);
      child.stderr.on('error', () => undefined);
      child.stdin.on('error', () => undefined);
      child.on('error', (error) => {
        spawnError = error.message;
      });
      child.on('exit', (code) => {
        exitCode = typeof code === 'number' && code >= 0 && code <= 255 ? code : null;
        // The executable has answered (or failed): what it left running in its group is ended, so
        // the pipes close and nothing of the call lingers.
        killGroup();
      });
      child.stdin.end(Buffer.concat([Buffer.from(CLAUDE_CODE_PREAMBLE, 'utf8'), call.request]));
      child.on('close', (code) => {
        if (typeof code === 'number' && code >= 0 && code <= 255) exitCode = code;
        settle((common) => {
          if (spawnError !== null || code !== 0) {
            const text = Buffer.concat(stderr).toString('utf8').split('\n')[0] ?? '';
            return {
              ...base,
              ...common,
              status: 'failed',
              detail: detail(spawnError ?? `exit status ${String(code)}: ${text}`),
            };
          }
          const read = readResult(Buffer.concat(stdout));
          if (!read.ok) return { ...base, ...common, status: 'failed', detail: read.why };
          const answer = Buffer.from(read.result, 'utf8');
          if (answer.length > call.maxResponseBytes) {
            return {
              ...base,
              ...common,
              status: 'output_limit',
              detail:
                `the answer has ${answer.length} bytes, more than the ${call.maxResponseBytes} left in the ` +
                'output budget',
            };
          }
          return {
            ...base,
            ...common,
            status: 'answered',
            response: read.result,
            response_sha256: sha256Hex(answer),
            response_bytes: answer.length,
            detail: null,
          };
        });
      });
    });
  };
  return { identity, dispatch };
}
