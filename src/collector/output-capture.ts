/**
 * Demultiplex the Engine API attach stream (8-byte frame header: stream type, three zero
 * bytes, u32be length; 1 = stdout, 2 = stderr) and keep at most `limit` bytes of stdout and
 * stderr together. Bytes past the bound are counted, not kept; crossing it is reported once so
 * that the collector can stop the container. Whatever the bound, the last 16 KiB of each stream are
 * kept too: the command_output_tail record of a transfer (docs/collector-transfer.md).
 */
import { createSha256 } from '../crypto/sha256.js';

export interface CapturedStream {
  readonly bytes: Buffer;
  /** Every byte the container wrote to this stream while it was observed. */
  readonly observedBytes: number;
  readonly truncated: boolean;
  /** SHA-256 of the retained bytes. */
  readonly sha256: string;
  /**
   * The stream's last bytes (at most TAIL_BYTES), past the bound included; absent where only the
   * retained bytes are known (tailSourceOf).
   */
  readonly last?: Buffer;
}

/** How many of each stream's last bytes a capture keeps beside the bounded head. */
export const TAIL_BYTES = 16_384;

/** The last bytes of a stream: its kept tail, or its retained bytes when they are the whole stream. */
export function tailSourceOf(stream: CapturedStream): Buffer {
  if (stream.last !== undefined) return stream.last;
  return stream.bytes.length === stream.observedBytes ? stream.bytes : Buffer.alloc(0);
}

export class OutputCapture {
  private header = Buffer.alloc(0);
  private remaining = 0;
  private stream = 0;
  private retained = 0;
  private readonly kept: [Buffer[], Buffer[]] = [[], []];
  private readonly observed: [number, number] = [0, 0];
  private readonly cut: [boolean, boolean] = [false, false];
  private readonly tails: [Buffer, Buffer] = [Buffer.alloc(0), Buffer.alloc(0)];
  private malformed = false;
  exceeded = false;

  constructor(private readonly limit: number) {}

  /** Feed raw attach bytes; returns true the first time the bound is crossed. */
  push(chunk: Buffer): boolean {
    const before = this.exceeded;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining === 0) {
        const need = 8 - this.header.length;
        const take = chunk.subarray(offset, offset + need);
        this.header = Buffer.concat([this.header, take]);
        offset += take.length;
        if (this.header.length < 8) break;
        this.stream = this.header[0] ?? 0;
        this.remaining = this.header.readUInt32BE(4);
        this.header = Buffer.alloc(0);
        if (this.stream !== 1 && this.stream !== 2) this.malformed = true;
        continue;
      }
      const take = chunk.subarray(offset, offset + Math.min(this.remaining, chunk.length - offset));
      offset += take.length;
      this.remaining -= take.length;
      this.accept(this.stream === 2 ? 1 : 0, take);
    }
    return !before && this.exceeded;
  }

  private accept(index: 0 | 1, data: Buffer): void {
    this.observed[index] += data.length;
    const tail = Buffer.concat([this.tails[index], data]);
    this.tails[index] = Buffer.from(tail.subarray(Math.max(0, tail.length - TAIL_BYTES)));
    const room = Math.max(0, this.limit - this.retained);
    if (data.length > room) {
      this.cut[index] = true;
      this.exceeded = true;
    }
    const keep = data.subarray(0, room);
    if (keep.length > 0) {
      // Copy: the chunk belongs to the socket's buffer pool.
      this.kept[index].push(Buffer.from(keep));
      this.retained += keep.length;
    }
  }

  /** True when a frame named a stream other than stdout/stderr (its bytes went to stdout). */
  get sawMalformedFrame(): boolean {
    return this.malformed;
  }

  result(index: 0 | 1): CapturedStream {
    const bytes = Buffer.concat(this.kept[index]);
    return {
      bytes,
      observedBytes: this.observed[index],
      truncated: this.cut[index],
      sha256: createSha256().update(bytes).digest('hex'),
      last: this.tails[index],
    };
  }

  get stdout(): CapturedStream {
    return this.result(0);
  }

  get stderr(): CapturedStream {
    return this.result(1);
  }
}
