/** The Stop payload bytes from stdin, bounded before they are held (docs/stop-hooks.md "Input"). */
import { AgentscmError } from '../../contracts/errors.js';
import { MAX_STOP_PAYLOAD_BYTES } from './payload.js';

/** Read stdin to its end; HOOK_PAYLOAD_INVALID past the bound (the rest is not read). */
export async function readStopStdin(stream: NodeJS.ReadableStream = process.stdin): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    length += buffer.length;
    if (length > MAX_STOP_PAYLOAD_BYTES) {
      throw new AgentscmError(
        'HOOK_PAYLOAD_INVALID',
        `the Stop hook input is larger than ${MAX_STOP_PAYLOAD_BYTES} bytes`,
        { hint: 'the hook reads one Stop payload as JSON on stdin; it did nothing' },
      );
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
