/** Human output of the changing `check` commands. */
import type { CheckChangeResult } from '../../workflows/checks/checks.js';

export function printChange(out: { log(message: string): void }, verb: string, result: CheckChangeResult): void {
  out.log(`${verb} check ${result.check}`);
  for (const path of result.written) out.log(`  wrote ${path}`);
  for (const path of result.removed) out.log(`  removed ${path}`);
  out.log(`checkpointed as Change ${result.change} version ${result.version}: revision ${result.revision}`);
  out.log(
    `target ${result.target} requires ${result.checks.map((c) => c.name).join(', ')}` +
      (result.changed ? '' : ' (unchanged)'),
  );
  out.log(`requirement_digest: ${result.requirement_digest}`);
}
