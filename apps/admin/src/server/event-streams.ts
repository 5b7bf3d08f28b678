import type { ServerResponse } from "node:http";

/** Bytes a stream may have queued unsent before it counts as stuck and is closed. */
const MAX_QUEUED_BYTES = 1 << 20;

/**
 * The open server-sent-event streams, at most `max` at once. Each update is encoded once and
 * written to every stream; a reader that stops reading is cut off rather than buffered for.
 */
export class EventStreams {
  readonly #max: number;
  readonly #open = new Set<ServerResponse>();

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#open.size;
  }

  get full(): boolean {
    return this.#open.size >= this.#max;
  }

  /** Adopts a response whose head was written; false (and nothing kept) when the limit is reached. */
  add(response: ServerResponse): boolean {
    if (this.full) return false;
    this.#open.add(response);
    const forget = (): void => {
      this.#open.delete(response);
    };
    response.once("close", forget);
    response.once("error", forget);
    return true;
  }

  /** Sends `data` as one event to one stream. */
  sendTo(response: ServerResponse, frame: string): void {
    if (response.writableLength > MAX_QUEUED_BYTES) {
      this.#open.delete(response);
      response.destroy();
      return;
    }
    response.write(frame);
  }

  broadcast(frame: string): void {
    for (const response of this.#open) this.sendTo(response, frame);
  }

  closeAll(): void {
    for (const response of this.#open) response.end();
    this.#open.clear();
  }
}

/** One event in the text/event-stream format; a line break in `data` becomes another `data:` line. */
export function eventFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data.split(/\r\n|\r|\n/).join("\ndata: ")}\n\n`;
}
