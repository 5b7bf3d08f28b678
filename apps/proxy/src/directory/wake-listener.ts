import type { BackendConnection } from "@geo/pool";
import { BackendCode } from "@geo/proto";
import type { Logger } from "../log.js";
import { ident } from "./sql-text.js";

export interface WakeListenerOptions {
  /** A connection of its own to the authority (outside the pools: LISTEN lives as long as it does). */
  readonly connect: () => Promise<BackendConnection>;
  readonly channel: string;
  /** A notification came, or the listener (re)connected and may have missed some. */
  readonly onWake: () => void;
  /** Wait before connecting again after the connection failed or broke. */
  readonly retryMs: number;
  readonly log: Logger;
}

/**
 * LISTENs on the shared directory's channel in the authority, so a move announced or withdrawn
 * by another proxy is read at once rather than at the next poll. Only a shortcut: a proxy whose
 * listener is down still reads everything every poll_ms.
 */
export class WakeListener {
  readonly #options: WakeListenerOptions;
  #connection: BackendConnection | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: WakeListenerOptions) {
    this.#options = options;
  }

  start(): void {
    void this.#listen();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#connection?.close().catch(() => undefined);
  }

  async #listen(): Promise<void> {
    if (this.#closed) return;
    let connection: BackendConnection | undefined;
    try {
      connection = await this.#options.connect();
      await connection.simpleQuery(`LISTEN ${ident(this.#options.channel)}`);
      if (this.#closed) {
        await connection.close();
        return;
      }
      this.#connection = connection;
      connection.setReceiver({
        onFrame: (frame) => {
          if (frame.code === BackendCode.NotificationResponse) this.#options.onWake();
        },
        onBroken: () => this.#again(connection!),
      });
      connection.onBroken(() => this.#again(connection!));
      this.#options.onWake();
    } catch (error) {
      this.#options.log.debug(
        { err: error },
        "the shared directory's wake-up listener could not connect; polls carry on",
      );
      await connection?.close().catch(() => undefined);
      this.#retry();
    }
  }

  #again(connection: BackendConnection): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    this.#retry();
  }

  #retry(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#listen(), this.#options.retryMs);
    this.#timer.unref();
  }
}
