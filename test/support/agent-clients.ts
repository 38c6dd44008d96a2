/**
 * The real coding-agent clients the client tests drive: Claude Code and the Codex CLI, pinned
 * versions from the npm registry. They are not dependencies of agentscm: each is installed once
 * with `npm install --no-save --prefix DIR/<name>@<version> <package>@<version>` into a cache
 * directory outside the repository (`AGENTSCM_TEST_CLIENTS_DIR`, default
 * `~/.cache/agentscm-test-clients`), and reused while its binary is there.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export interface AgentClientSpec {
  /** Short name, the cache directory's prefix. */
  readonly name: 'claude-code' | 'codex';
  readonly pkg: string;
  readonly version: string;
  /** The binary's name under node_modules/.bin. */
  readonly bin: string;
}

export const CLAUDE_CODE: AgentClientSpec = {
  name: 'claude-code',
  pkg: '@anthropic-ai/claude-code',
  version: '2.1.328',
  bin: 'claude',
};
export const CODEX: AgentClientSpec = { name: 'codex', pkg: '@openai/codex', version: '0.169.0', bin: 'codex' };

/** Where installed clients are kept. */
export function clientsDir(): string {
  const configured = process.env.AGENTSCM_TEST_CLIENTS_DIR;
  return configured !== undefined && configured !== ''
    ? configured
    : join(homedir(), '.cache', 'agentscm-test-clients');
}

/** The binary path an installed client has (whether or not it is there yet). */
export function clientBinary(spec: AgentClientSpec): string {
  return join(clientsDir(), `${spec.name}@${spec.version}`, 'node_modules', '.bin', spec.bin);
}

const installs = new Map<string, Promise<string>>();

/**
 * Install `spec` once (idempotent: an existing binary is reused; an interrupted install is
 * discarded, since the prefix is only moved into place when npm succeeded) and return its binary.
 */
export function installClient(spec: AgentClientSpec): Promise<string> {
  const key = `${spec.name}@${spec.version}`;
  let pending = installs.get(key);
  if (pending === undefined) {
    pending = install(spec);
    installs.set(key, pending);
  }
  return pending;
}

async function install(spec: AgentClientSpec): Promise<string> {
  const binary = clientBinary(spec);
  if (existsSync(binary)) return binary;
  const root = clientsDir();
  const prefix = join(root, `${spec.name}@${spec.version}`);
  const staging = `${prefix}.partial-${process.pid}`;
  mkdirSync(root, { recursive: true });
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    await execFileP(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', staging, `${spec.pkg}@${spec.version}`],
      { timeout: 600_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, npm_config_engine_strict: 'false' } },
    );
    if (!existsSync(join(staging, 'node_modules', '.bin', spec.bin))) {
      throw new Error(`npm installed ${spec.pkg}@${spec.version} without its ${spec.bin} binary`);
    }
    rmSync(prefix, { recursive: true, force: true });
    renameSync(staging, prefix);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/** Both clients, installed when missing. */
export async function installAgentClients(): Promise<{ claude: string; codex: string }> {
  const [claude, codex] = await Promise.all([installClient(CLAUDE_CODE), installClient(CODEX)]);
  return { claude, codex };
}
