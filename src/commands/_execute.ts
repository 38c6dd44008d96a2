/**
 * The entry of the CLI: bin/run.js imports it from dist/commands/_execute.js (the bundle chunk
 * that every built command imports, so the CLI framework is loaded once; bin/bundle.js) and
 * bin/dev.js from the sources. Both run the same steps (docs/cli.md):
 *
 * - the leading `--data-dir` is taken, and `help [COMMAND…]` and `-h` become `--help`
 *   (src/commands/_leading-flags.ts);
 * - oclif loads no plugin but this package: no user plugins from its data directory, no dev
 *   or just-in-time plugins — this CLI has none, and files under a directory the user names
 *   must never run as code;
 * - AGENTSCM_DATA_DIR names the native data directory only: oclif would take <BIN>_DATA_DIR as
 *   its own data directory (where user plugins live), and is kept from reading it;
 * - a failure outside a command (unknown command, bad leading flag) is one `error[USAGE]` line
 *   like every other error, not oclif's own format.
 */
import { Config, flush, run, type Interfaces } from '@oclif/core';

import { AgentscmError, ERROR_CODES } from '../contracts/errors.js';
import { formatJson } from '../contracts/json/canonical-json.js';
import { oneLine, quoteForMessage } from '../contracts/message-text.js';
import { toAgentscmError } from './_base.js';
import { helpAsFlag, takeLeadingDataDir } from './_leading-flags.js';

// oclif's Config reads AGENTSCM_DATA_DIR as its own data directory (Config.load: dataDir =
// scopedEnvVar('DATA_DIR')). oclif builds a Config more than once per run (run() reloads the
// one it is given), so the lookup is cut off for every instance, not only one of a subclass;
// every other variable is looked up as oclif does.
Config.prototype.scopedEnvVar = function scopedEnvVarWithoutDataDir(this: Config, key: string): string | undefined {
  if (key === 'DATA_DIR') return undefined;
  const name = this.scopedEnvVarKeys(key).find((k) => process.env[k]);
  return name === undefined ? undefined : process.env[name];
};

export interface CliEntry {
  /** The arguments after the executable. */
  readonly argv: readonly string[];
  /** The package root, or a file inside it. */
  readonly root: string;
  /** package.json as the development entry adjusts it; read from root otherwise. */
  readonly pjson?: Interfaces.PJSON;
}

// oclif's two wordings: running an unknown command, and asking for the help of one.
const UNKNOWN_COMMAND = /^command (.+) not found\.?$/is;

/** A failure raised by oclif before or instead of a command, as our error type. */
function entryError(error: unknown): AgentscmError {
  if (error instanceof Error) {
    const unknown = UNKNOWN_COMMAND.exec(error.message);
    if (unknown !== null) {
      const id = (unknown[1] ?? '').replaceAll(':', ' ');
      return new AgentscmError(
        'USAGE',
        id.startsWith('-')
          ? `unknown flag ${quoteForMessage(id.split(' ')[0] ?? id)}`
          : `unknown command ${quoteForMessage(id)}`,
        {
          hint: 'run `agentscm --help` for the commands',
        },
      );
    }
  }
  return toAgentscmError(error);
}

function report(error: AgentscmError, argv: readonly string[]): void {
  const hint = error.hint === undefined ? '' : `; ${error.hint}`;
  process.stderr.write(`error[${error.code}]: ${oneLine(error.message)}${oneLine(hint)}\n`);
  if (argv.includes('--json')) {
    process.stdout.write(
      `${formatJson({
        error: { code: error.code, message: error.message, ...(error.hint === undefined ? {} : { hint: error.hint }) },
      })}\n`,
    );
  }
  process.exitCode = ERROR_CODES[error.code].exit;
}

/** Run one agentscm invocation; errors of commands are reported by BaseCommand, the rest here. */
export async function runAgentscm(entry: CliEntry): Promise<void> {
  let argv: string[];
  try {
    argv = helpAsFlag(takeLeadingDataDir(entry.argv));
  } catch (error) {
    report(entryError(error), entry.argv);
    return;
  }
  try {
    await run(argv, {
      root: entry.root,
      ...(entry.pjson === undefined ? {} : { pjson: entry.pjson }),
      userPlugins: false,
      devPlugins: false,
      jitPlugins: false,
    });
  } catch (error) {
    const exit = (error as { oclif?: { exit?: unknown } } | null)?.oclif?.exit;
    // oclif's own clean exit (e.g. an ExitError with status 0) is not a failure.
    if (exit === 0) return;
    report(entryError(error), argv);
  } finally {
    await flush();
  }
}
