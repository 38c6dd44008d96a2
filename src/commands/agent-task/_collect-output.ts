/** What `agent-task collect` and `retry-upload` print (human lines and the --json document). */
import type { CollectResult } from '../../collector/collect-upload.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import type { JsonObject } from '../../contracts/json/json-value.js';

export function collectResultJson(result: CollectResult): JsonObject {
  return {
    upload_request_id: result.upload_request_id,
    ran: result.ran,
    task_id: result.task_id,
    attempt_id: result.attempt_id,
    outcome: result.outcome,
    exit_code: result.exit_code,
    output_tail: result.output_tail === null ? null : { ...result.output_tail },
    transfer_digest: result.transfer_digest,
    envelope_bytes: result.envelope_bytes,
    envelope_file: result.envelope_file,
    upload: { target: result.upload.target, answer: result.upload.answer },
  };
}

export function printCollectResult(log: (line: string) => void, result: CollectResult): void {
  log(
    `${result.ran ? 'collected' : 'uploaded the retained envelope of'} task ${result.task_id} attempt ` +
      `${result.attempt_id} (upload request ${result.upload_request_id})`,
  );
  log(`transfer ${result.transfer_digest}, ${result.envelope_bytes} bytes, retained at ${result.envelope_file}`);
  log(
    `uploaded to ${result.upload.target === 'local' ? 'the local authority' : 'the hub'}: ` +
      `${formatJson(result.upload.answer).replaceAll('\n', '\n  ')}`,
  );
  log(
    `hint: the check's verdict is ` +
      `${result.outcome}${result.exit_code === null ? '' : ` (exit ${result.exit_code})`}; whether it counts is ` +
      `for qualification to decide`,
  );
  const tail = result.output_tail;
  if (tail === null) return;
  for (const name of ['stdout', 'stderr'] as const) {
    if (tail[name] === '') continue;
    const cut = result.output_tail_cut?.[name] ?? tail.truncated;
    log(`${name}, last lines${cut ? ' (earlier output left out)' : ''}:`);
    for (const line of tail[name].split('\n')) log(`  | ${line}`);
  }
}
