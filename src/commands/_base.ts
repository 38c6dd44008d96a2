/**
 * What every agentscm command shares: --data-dir (also before the command and as
 * AGENTSCM_DATA_DIR), --json, and the error contract of docs/wire.md — one stderr line
 * `error[CODE]: message`, with --json also {"error":{code,message}} on stdout, and the exit
 * code from the code table. Files starting with `_` are not commands (package.json globs).
 */
import { resolve } from 'node:path';
import { Command, Flags } from '@oclif/core';

import { displayOutput } from '../contracts/display-text.js';
import { AgentscmError, ERROR_CODES, isAgentscmError, type ErrorCode } from '../contracts/errors.js';
import { formatJson } from '../contracts/json/canonical-json.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { oneLine } from '../contracts/message-text.js';
import { classifySqliteError, isSqliteError } from '../native/sqlite-errors.js';
import { defaultDataDir, workspaceRepository } from './_data-dir.js';
import { commandUsageError } from './_usage.js';

export const dataDirFlag = Flags.string({
  description:
    'Native data directory (also accepted before the command, or as AGENTSCM_DATA_DIR; default: the store of the ' +
    'enclosing workspace, else $XDG_DATA_HOME/agentscm or ~/.local/share/agentscm).',
  env: 'AGENTSCM_DATA_DIR',
  helpValue: 'DIR',
});

/**
 * The one `--repository` flag of every command that acts on one repository (docs/cli.md
 * "Choosing the repository"); resolve its value with BaseCommand.repositoryOf.
 */
export const repositoryFlag = Flags.string({
  description:
    'Repository ID or name (default: the repository of the enclosing workspace, else the only repository of the ' +
    'store).',
  helpValue: 'ID_OR_NAME',
});

/** `--repository` of the list commands: without it and outside a workspace they cover every repository. */
export const listRepositoryFlag = Flags.string({
  description:
    'Only this repository (ID or name; default: the repository of the enclosing workspace, else every repository ' +
    'of the store).',
  helpValue: 'ID_OR_NAME',
});

/**
 * oclif's parse messages span lines ("The following errors occurred:", one line per problem,
 * "See more help with --help"): keep every problem, on one line, and leave the hint to us.
 */
function usageMessage(message: string): string {
  const problems = message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== 'The following errors occurred:' && !/^See more help with/.test(line));
  return problems.length === 0 ? 'invalid command line' : problems.join('; ');
}

/** Map an oclif parse failure or any other throwable to our error type. */
export function toAgentscmError(error: unknown): AgentscmError {
  if (isAgentscmError(error)) return error;
  // A SQLite failure that escaped its database's own handling gets that database's documented
  // code, never the parse-error guess below ("file is not a database" is not a usage error).
  if (isSqliteError(error)) return classifySqliteError(error, null);
  if (error instanceof Error) {
    const oclif = (error as { oclif?: { exit?: number } }).oclif;
    const parseError =
      error.constructor.name.endsWith('Error') &&
      /flag|argument|Unexpected|Missing|Expected|Nonexistent|not a|is not/i.test(error.message);
    if ((oclif !== undefined && oclif.exit === 2) || parseError) {
      return new AgentscmError('USAGE', usageMessage(error.message), {
        hint: 'run the command with --help',
      });
    }
    return new AgentscmError('INTERNAL', error.message, { cause: error });
  }
  return new AgentscmError('INTERNAL', String(error));
}

export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true;
  static override baseFlags = {
    'data-dir': dataDirFlag,
  };

  /**
   * The absolute data directory: flag, leading flag or environment, else the store of the
   * workspace enclosing `from` (default: the working directory), else the per-user one.
   */
  protected resolveDataDir(flagValue: string | undefined, from?: string): string {
    // resolve('') is the working directory: an empty value names no directory at all.
    if (flagValue === '') {
      throw new AgentscmError('USAGE', '--data-dir needs a directory, not an empty value', {
        hint: 'pass --data-dir DIR',
      });
    }
    const named = flagValue ?? process.env.AGENTSCM_DATA_DIR;
    return named === undefined ? defaultDataDir(from) : resolve(named);
  }

  /**
   * The repository a command acts on (docs/cli.md "Choosing the repository"): `--repository` when
   * given, else the repository of the workspace `--workspace` names or that encloses the working
   * directory — when `dataDir` is that workspace's store — else undefined, which the core reads
   * as "the only repository of the store" (or, for a list, every repository).
   */
  protected repositoryOf(flagValue: string | undefined, dataDir: string, workspace?: string): string | undefined {
    return flagValue ?? workspaceRepository(dataDir, workspace) ?? undefined;
  }

  /**
   * Progress for long operations: stderr only, so --json stdout stays one document; shown when
   * stderr is a terminal (as git does) and --json is not given, or when AGENTSCM_PROGRESS=1
   * asks for it, so scripts and JSON consumers see no extra lines.
   */
  protected progress(message: string): void {
    const shown = process.env.AGENTSCM_PROGRESS === '1' || (process.stderr.isTTY === true && !this.jsonEnabled());
    if (shown) process.stderr.write(`${message}\n`);
  }

  /** The progress printer to hand to a core function's onProgress. */
  protected get progressSink(): (message: string) => void {
    return (message) => this.progress(message);
  }

  /**
   * Every human line a command prints goes through displayOutput (docs/cli.md "Names shown to
   * people"): a recorded name or other text with a control or bidirectional formatting character
   * is shown escaped and marked `[!]` instead of raw (a JSON document printed for people: the
   * characters as JSON escapes, the same value). Commands that print paths mark each path
   * themselves (displayText); this is the guard for any text that reaches the terminal otherwise.
   * --json output (logJson) is machine output and stays exact.
   */
  override log(message = '', ...args: unknown[]): void {
    super.log(typeof message === 'string' ? displayOutput(message) : message, ...args);
  }

  override logToStderr(message = '', ...args: unknown[]): void {
    super.logToStderr(typeof message === 'string' ? displayOutput(message) : message, ...args);
  }

  protected override logJson(json: unknown): void {
    process.stdout.write(`${formatJson(json as JsonValue)}\n`);
  }

  protected override toErrorJson(err: unknown): {
    error: { code: ErrorCode; message: string; hint?: string; details?: Record<string, unknown> };
  } {
    const error = toAgentscmError(err);
    return {
      error: {
        code: error.code,
        message: error.message,
        ...(error.hint === undefined ? {} : { hint: error.hint }),
        ...(error.details === undefined ? {} : { details: error.details }),
      },
    };
  }

  override async catch(err: unknown): Promise<void> {
    // A malformed command line: one line naming the flag or argument, the usage line as hint.
    const error = commandUsageError(err, this.config.bin, this.id ?? '', this.ctor) ?? toAgentscmError(err);
    const hint = error.hint === undefined ? '' : `; ${error.hint}`;
    // One line whatever the message holds (docs/cli.md "Error lines").
    process.stderr.write(`error[${error.code}]: ${oneLine(error.message)}${oneLine(hint)}\n`);
    if (error.code === 'INTERNAL' && process.env.AGENTSCM_DEBUG && error.cause instanceof Error) {
      process.stderr.write(`${error.cause.stack ?? ''}\n`);
    }
    if (this.jsonEnabled()) this.logJson(this.toErrorJson(error));
    process.exitCode = ERROR_CODES[error.code].exit;
    return Promise.resolve();
  }
}
