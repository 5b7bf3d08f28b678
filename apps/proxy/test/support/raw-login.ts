import { connect as netConnect, type Socket } from "node:net";
import {
  BackendFramer,
  decodeBackendMessage,
  encodeSASLInitialResponse,
  encodeSASLResponse,
  encodeStartupMessage,
  isProtocolFault,
  SCRAM_SHA_256,
  ScramClient,
} from "@geo/proto";

/**
 * Logins on raw sockets from a chosen client address. Linux routes all of 127.0.0.0/8 to
 * loopback, so binding the client side to 127.0.0.2, 127.0.0.3 ... gives the proxy distinct
 * client addresses, which no driver lets a test choose.
 */

/** "ok" at ReadyForQuery, the SQLSTATE of an ErrorResponse, or what ended the login otherwise. */
export type LoginOutcome = "ok" | string;

export class RawLogins {
  private readonly sockets: Socket[] = [];

  constructor(private readonly port: number) {}

  /** A connected socket from `localAddress`; it is destroyed by `destroyAll`. */
  open(localAddress = "127.0.0.1"): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = netConnect({ port: this.port, host: "127.0.0.1", localAddress }, () => resolve(socket));
      socket.once("error", reject);
      socket.on("error", () => undefined);
      this.sockets.push(socket);
    });
  }

  /** `count` silent sockets: connected, nothing sent. */
  async silent(count: number, localAddress = "127.0.0.1"): Promise<Socket[]> {
    const opened: Socket[] = [];
    for (let i = 0; i < count; i++) opened.push(await this.open(localAddress));
    return opened;
  }

  /** A SCRAM login as `user` from `localAddress`, given up as "no answer" after `withinMs`. */
  async scram(
    options: { user: string; password: string; database?: string; localAddress: string },
    withinMs = 20_000,
  ): Promise<LoginOutcome> {
    const socket = await this.open(options.localAddress);
    const framer = new BackendFramer();
    const scram = new ScramClient({ password: options.password });
    return new Promise<LoginOutcome>((resolve) => {
      const timer = setTimeout(() => finish("no answer"), withinMs);
      const finish = (outcome: LoginOutcome) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(outcome);
      };
      socket.on("data", (chunk: Buffer) => {
        framer.push(chunk);
        for (let frame = framer.next(); frame !== null; frame = framer.next()) {
          if (isProtocolFault(frame)) return finish("protocol fault");
          const message = decodeBackendMessage(frame);
          if (isProtocolFault(message)) return finish("protocol fault");
          if (message.type === "AuthenticationSASL")
            socket.write(encodeSASLInitialResponse({ mechanism: SCRAM_SHA_256, data: scram.clientFirst() }));
          else if (message.type === "AuthenticationSASLContinue") {
            const final = scram.serverFirst(message.data);
            if (!Buffer.isBuffer(final)) return finish("scram failure");
            socket.write(encodeSASLResponse({ data: final }));
          } else if (message.type === "ErrorResponse") return finish(message.fields.code ?? "error");
          else if (message.type === "ReadyForQuery") return finish("ok");
        }
      });
      socket.on("close", () => finish("closed"));
      socket.write(
        encodeStartupMessage({
          parameters: { user: options.user, database: options.database ?? "postgres" },
        }),
      );
    });
  }

  destroyAll(): void {
    for (const socket of this.sockets.splice(0)) socket.destroy();
  }
}

/** How many of each outcome. */
export function tally(outcomes: readonly LoginOutcome[]): Map<LoginOutcome, number> {
  const counts = new Map<LoginOutcome, number>();
  for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  return counts;
}
