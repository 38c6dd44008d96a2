#!/usr/bin/env node
// Entry point of the built CLI (dist/, made by bin/bundle.js). The steps every invocation takes —
// the leading --data-dir, no plugins, one error line for unknown commands — are in
// src/commands/_execute.ts, shared with bin/dev.js.
//
// `agentscm --version` is answered here, before the CLI framework loads (docs/architecture.md
// "What each command loads"): the same line oclif prints (`name/version platform-arch
// node-VERSION`, from package.json beside this file), at the cost of a bare Node start. Where
// oclif would name the platform differently (WSL) or the leading-flag step would refuse the
// command line (an empty AGENTSCM_DATA_DIR), the framework answers as before.
import { existsSync, readFileSync } from 'node:fs';
import { arch, release } from 'node:os';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);

/** oclif's platform name (its getPlatform), or undefined where it would say `wsl`. */
function plainPlatform() {
  if (process.platform !== 'linux') return process.platform;
  if (release().toLowerCase().includes('microsoft')) return undefined;
  try {
    if (readFileSync('/proc/version', 'utf8').toLowerCase().includes('microsoft')) return undefined;
  } catch {
    // no /proc/version: oclif goes on to the paths below as well
  }
  if (existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL')) return undefined;
  return 'linux';
}

function versionLine() {
  if (argv[0] !== '--version' || process.env.AGENTSCM_DATA_DIR === '') return undefined;
  const platform = plainPlatform();
  if (platform === undefined) return undefined;
  const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  if ((pjson.oclif?.additionalVersionFlags ?? []).length > 0) return undefined;
  const cpu = arch() === 'ia32' ? 'x86' : arch();
  return `${pjson.name}/${pjson.version} ${platform}-${cpu} node-${process.version}\n`;
}

const version = versionLine();
if (version !== undefined) {
  process.stdout.write(version);
} else {
  const { runAgentscm } = await import('../dist/commands/_execute.js');
  await runAgentscm({ argv, root: fileURLToPath(import.meta.url) });
}
