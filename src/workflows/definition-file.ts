/**
 * Read a workflow definition file named on the command line: its size is checked before it
 * is read (spec: every bound enforced before allocation), then it is strictly decoded.
 */
import {
  decodeWorkflowDefinition,
  WORKFLOW_LIMITS,
  type WorkflowDefinition,
} from '../contracts/workflow-definition.js';
import { readBoundedInput } from '../native/bounded-input.js';

/** The exact bytes of a definition file, at most WORKFLOW_LIMITS.maxDefinitionBytes. */
export function readDefinitionBytes(file: string): Buffer {
  return readBoundedInput(file, {
    limit: WORKFLOW_LIMITS.maxDefinitionBytes,
    what: 'the workflow definition',
    missingHint: 'pass the path of a workflow definition file (docs/skill-workflows.md)',
    tooLargeHint: `keep definitions at most ${WORKFLOW_LIMITS.maxDefinitionBytes} bytes`,
  });
}

/** Read and strictly decode a definition file. */
export function readDefinitionFile(file: string): { bytes: Buffer; definition: WorkflowDefinition } {
  const bytes = readDefinitionBytes(file);
  return { bytes, definition: decodeWorkflowDefinition(bytes) };
}
