/**
 * What the five contract commands share: the optional FILE argument (stdin when absent or `-`),
 * one call of callAgentStateOperation, the answer printed as JSON, and exit 1 when the answer
 * reports a blocking state (conflicts found, no agent eligible).
 */
import { Args } from '@oclif/core';

import { readAgentStateInput } from '../../agent-state/input.js';
import { callAgentStateOperation, type AgentStateOperation } from '../../agent-state/operations.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import type { JsonValue } from '../../contracts/json/json-value.js';

export const inputArg = {
  file: Args.string({ description: 'Input JSON file, or - for stdin (the default).', default: '-', ignoreStdin: true }),
};

/** Run OPERATION on FILE and print the answer; returns it for --json. */
export function runOperation(operation: AgentStateOperation, file: string, log: (line: string) => void): JsonValue {
  const result = callAgentStateOperation(operation, readAgentStateInput(file));
  log(formatJson(result.value));
  if (result.exit !== 0) process.exitCode = result.exit;
  return result.value;
}
