/**
 * Read a workflow definition file named on the command line: its size is checked before it
 * is read (spec: every bound enforced before allocation), then it is strictly decoded.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { AgentscmError } from '../contracts/errors.js';
import type { WorkflowDefinition } from '../contracts/workflow-definition.js';
import { decodeWorkflowDefinition, WORKFLOW_LIMITS } from '../contracts/workflow-definition.js';

/** The exact bytes of a definition file, at most WORKFLOW_LIMITS.maxDefinitionBytes. */
export function readDefinitionBytes(file: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AgentscmError(code === 'ENOENT' ? 'USAGE' : 'IO_ERROR', `cannot open the workflow definition ${file}: ${(error as Error).message}`, {
      hint: 'pass the path of a workflow definition JSON file',
      cause: error,
    });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new AgentscmError('USAGE', `the workflow definition ${file} is not a regular file`, { hint: 'pass a JSON file' });
    if (stat.size > WORKFLOW_LIMITS.maxDefinitionBytes) {
      throw new AgentscmError('INPUT_TOO_LARGE', `the workflow definition ${file} has ${stat.size} bytes, more than the limit of ${WORKFLOW_LIMITS.maxDefinitionBytes}; it was not read`, {
        hint: `keep definitions at most ${WORKFLOW_LIMITS.maxDefinitionBytes} bytes`,
        details: { size: stat.size, limit: WORKFLOW_LIMITS.maxDefinitionBytes },
      });
    }
    // Read one byte past the bound so a file that grew after fstat is still refused.
    const buffer = Buffer.alloc(stat.size + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length === buffer.length) {
        throw new AgentscmError('INPUT_TOO_LARGE', `the workflow definition ${file} changed size while it was read`, { hint: 'retry once the file is no longer being written' });
      }
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** Read and strictly decode a definition file. */
export function readDefinitionFile(file: string): { bytes: Buffer; definition: WorkflowDefinition } {
  const bytes = readDefinitionBytes(file);
  return { bytes, definition: decodeWorkflowDefinition(bytes) };
}
