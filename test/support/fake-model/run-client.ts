/**
 * Run a real agent client headless against a fake model server, the way a user runs it: its own
 * HOME (a temporary directory), telemetry and update checks off, permissions that let it run
 * shell commands, and `agentscm` on PATH (a shim running this checkout's CLI, the entry the tests
 * use) so that both the model's commands and the installed Stop hooks find it.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

import { cliEntryArgv } from '../../helpers/cli.js';
import { shellQuote } from './transcript.js';

export interface ClientRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Write `DIR/agentscm`, a shim that runs this checkout's CLI with node; return DIR. */
export function agentscmShim(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const argv = [process.execPath, ...cliEntryArgv()].map(shellQuote).join(' ');
  writeFileSync(join(dir, 'agentscm'), `#!/bin/sh\nexec ${argv} "$@"\n`);
  chmodSync(join(dir, 'agentscm'), 0o755);
  return dir;
}

export interface RunClientOptions {
  readonly cwd: string;
  readonly home: string;
  /** Directories put first on PATH (the agentscm shim's). */
  readonly path: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

function spawnClient(binary: string, args: readonly string[], options: RunClientOptions, env: NodeJS.ProcessEnv) {
  return new Promise<ClientRun>((resolve, reject) => {
    const child = spawn(binary, args, {
      cwd: options.cwd,
      env: env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 300_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function baseEnv(options: RunClientOptions): NodeJS.ProcessEnv {
  return {
    PATH: [...options.path, process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
    HOME: options.home,
    LANG: 'C.UTF-8',
    TMPDIR: process.env.TMPDIR ?? '/tmp',
    ...(process.env.DOCKER_HOST !== undefined ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    ...options.env,
  };
}

/** `claude -p PROMPT` against the fake Anthropic server at `origin`. */
export function runClaude(binary: string, origin: string, prompt: string, options: RunClientOptions) {
  const env = {
    ...baseEnv(options),
    ANTHROPIC_BASE_URL: origin,
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
    // --dangerously-skip-permissions is refused as root outside a sandbox; the test is one.
    IS_SANDBOX: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  const args = ['-p', prompt, '--dangerously-skip-permissions', '--output-format', 'json', '--max-turns', '60'];
  return spawnClient(binary, args, options, env);
}

/** Write `HOME/.codex/config.toml` with a model provider at `origin` and `cwd` trusted. */
export function writeCodexConfig(home: string, origin: string, trusted: string): void {
  mkdirSync(join(home, '.codex'), { recursive: true });
  const toml = [
    'model = "fake-model"',
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    '',
    '[features]',
    'hooks = true',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${JSON.stringify(`${origin}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "FAKE_MODEL_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    `[projects.${JSON.stringify(trusted)}]`,
    'trust_level = "trusted"',
    '',
  ].join('\n');
  writeFileSync(join(home, '.codex', 'config.toml'), toml);
}

/** `codex exec PROMPT` against the fake Responses server (see writeCodexConfig). */
export function runCodex(binary: string, prompt: string, options: RunClientOptions) {
  const env = {
    ...baseEnv(options),
    FAKE_MODEL_API_KEY: 'sk-test-not-a-key',
    CODEX_HOME: join(options.home, '.codex'),
  };
  const args = [
    'exec',
    '--skip-git-repo-check',
    '--dangerously-bypass-approvals-and-sandbox',
    // Codex runs a new hook only once trusted (a review in its TUI); the test vets its own hook.
    '--dangerously-bypass-hook-trust',
    prompt,
  ];
  return spawnClient(binary, args, options, env);
}
