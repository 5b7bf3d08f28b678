import type { Socket } from "node:net";
import {
  decodeStartupPacket,
  encodeErrorResponse,
  FrontendCode,
  FrontendFramer,
  isProtocolFault,
  Messages,
  type PgError,
  protocolViolation,
  STARTUP_FRAME_CODE,
  type StartupMessage,
} from "@geo/proto";
import { checkStartup } from "../session/startup.js";
import { acceptTls } from "../tls/client-tls.js";
import { ReplayStream } from "../tls/replay-stream.js";
import {
  authenticationTimeout,
  authProtocolViolation,
  evictedSilent,
  sslRequestRepeated,
  startupTimeout,
  tlsRequired,
  unencryptedAfterSslRequest,
  verifierLookupFailed,
} from "./auth-errors.js";
import type { Admitted, FrontDoorOptions } from "./front-door-options.js";
import { LoginExchange, type LoginStep } from "./login-exchange.js";

/** The first byte of a TLS handshake record: a ClientHello sent without SSLRequest (direct TLS). */
const TLS_HANDSHAKE_RECORD = 0x16;
/** How long a closing connection may take to read our last bytes. */
const CLOSE_GRACE_MS = 1_000;

/** What a handshake tells the door about its slot. */
export interface DoorSlots {
  startDelay(handshake: Handshake): void;
  done(handshake: Handshake): void;
}

const PHASES = ["startup", "negotiating", "looking-up", "authenticating", "delaying", "done"] as const;
type Phase = (typeof PHASES)[number];

/** One connection's way through the door. */
export class Handshake {
  readonly result: Promise<Admitted | null>;
  private resolve!: (admitted: Admitted | null) => void;
  private readonly framer = new FrontendFramer();
  private stream: Socket;
  private encrypted = false;
  private phase: Phase = "startup";
  private sawBytes = false;
  private startup: { bytes: Buffer; user: string } | null = null;
  private exchange: LoginExchange | null = null;
  private readonly timer: NodeJS.Timeout;
  private startupTimer: NodeJS.Timeout | null;
  private readonly onData = (chunk: Buffer) => this.receive(chunk);
  private readonly onError = (error: Error) =>
    this.options.log.debug({ err: error.message }, "client socket error");
  private readonly onClose = () => this.finish(null);

  constructor(
    private readonly raw: Socket,
    readonly address: string,
    private readonly options: FrontDoorOptions,
    private readonly slots: DoorSlots,
  ) {
    this.result = new Promise((resolve) => {
      this.resolve = resolve;
    });
    this.stream = raw;
    this.timer = setTimeout(() => {
      if (this.phase === "negotiating") this.abort();
      else this.fatal(authenticationTimeout());
    }, options.timeoutMs);
    this.startupTimer =
      options.startupTimeoutMs < options.timeoutMs
        ? setTimeout(() => {
            this.startupTimer = null;
            if (this.startup !== null) return;
            if (this.phase === "negotiating") this.abort();
            else this.fatal(startupTimeout());
          }, options.startupTimeoutMs)
        : null;
    raw.setNoDelay(true);
    // Errors after the door closed (a reset while the session starts, a TLS layer that took the
    // socket over) must not be unhandled; the session logs its own.
    raw.on("error", noop);
    this.listen(raw);
  }

  /** Nothing has arrived on the connection yet. */
  get silent(): boolean {
    return !this.sawBytes && this.phase === "startup";
  }

  abort(): void {
    this.finish(null);
    this.stream.destroy();
  }

  /** Closed to make room for a newer connection (see `FrontDoor.admit`). */
  evict(): void {
    this.fatal(evictedSilent());
  }

  private listen(stream: Socket): void {
    this.stream = stream;
    stream.on("data", this.onData);
    stream.on("error", this.onError);
    stream.on("close", this.onClose);
  }

  private unlisten(): void {
    this.stream.off("data", this.onData);
    this.stream.off("error", this.onError);
    this.stream.off("close", this.onClose);
  }

  private receive(chunk: Buffer): void {
    if (this.phase === "done") return;
    if (!this.sawBytes && !this.encrypted && chunk.length > 0 && chunk[0] === TLS_HANDSHAKE_RECORD) {
      this.sawBytes = true;
      this.directTls(chunk);
      return;
    }
    if (!this.sawBytes && this.phase === "startup" && isTerminate(chunk)) {
      // PostgreSQL closes without a word (the bytes read as a startup length it only logs);
      // drivers that say goodbye before starting up expect no error.
      this.closeSilently();
      return;
    }
    this.sawBytes = true;
    this.framer.push(chunk);
    this.pump();
  }

  /** Handles every complete packet unless a step is waiting (a lookup, a handshake, a delay). */
  private pump(): void {
    while (this.phase === "startup" || this.phase === "authenticating") {
      const frame = this.framer.next();
      if (frame === null) return;
      if (isProtocolFault(frame)) {
        this.fatal(protocolViolation(frame));
        return;
      }
      if (frame.code === STARTUP_FRAME_CODE) this.startupPacket(frame.payload, frame.bytes);
      else if (frame.code === FrontendCode.AuthenticationResponse && this.exchange !== null)
        this.answer(this.exchange.step(frame.payload));
      else
        this.fatal(
          authProtocolViolation(
            `message '${String.fromCharCode(frame.code)}' before authentication completed`,
          ),
        );
    }
  }

  private startupPacket(payload: Buffer, bytes: Buffer): void {
    const packet = decodeStartupPacket(payload);
    if (isProtocolFault(packet)) {
      this.fatal(protocolViolation(packet));
      return;
    }
    switch (packet.type) {
      case "SSLRequest":
        this.sslRequest();
        return;
      case "GSSENCRequest":
        // libpq expects 'N' (then tries TLS or goes on in clear), not an error.
        this.stream.write(Messages.sslRefused);
        return;
      case "CancelRequest": {
        const outcome = this.options.cancels.cancel(packet.processId, Buffer.from(packet.secretKey));
        this.options.log.info({ matched: outcome === "cancelled", outcome }, "cancel request");
        // PostgreSQL answers a CancelRequest with nothing, whatever the key.
        this.finish(null);
        endConnection(this.stream);
        return;
      }
      case "StartupMessage":
        this.startupMessage(packet, Buffer.from(bytes));
        return;
    }
  }

  private sslRequest(): void {
    const tls = this.options.tls;
    if (this.encrypted) {
      this.fatal(sslRequestRepeated());
      return;
    }
    if (tls === null) {
      this.stream.write(Messages.sslRefused);
      return;
    }
    // CVE-2021-23214: bytes already here were sent in clear before the handshake, where anyone on
    // the path could have put them; reading them as if they came through TLS would let a man in
    // the middle inject commands.
    if (this.framer.bufferedLength > 0) {
      this.fatal(unencryptedAfterSslRequest());
      return;
    }
    this.phase = "negotiating";
    this.unlisten();
    this.raw.write(Messages.sslAccepted);
    this.handshake(acceptTls(this.raw, tls, false));
  }

  private directTls(chunk: Buffer): void {
    const tls = this.options.tls;
    if (tls === null) {
      this.finish(null);
      this.raw.destroy();
      return;
    }
    this.phase = "negotiating";
    this.unlisten();
    this.handshake(acceptTls(new ReplayStream(this.raw, chunk), tls, true));
  }

  private handshake(secured: Promise<Socket>): void {
    secured.then(
      (secure) => {
        if (this.phase === "done") {
          secure.destroy();
          return;
        }
        this.encrypted = true;
        this.phase = "startup";
        this.listen(secure);
      },
      (error: unknown) => {
        this.options.log.info(
          { err: error instanceof Error ? error.message : String(error) },
          "TLS handshake failed",
        );
        this.finish(null);
        this.raw.destroy();
      },
    );
  }

  private startupMessage(message: StartupMessage, bytes: Buffer): void {
    if (this.options.tls?.required === true && !this.encrypted) {
      this.fatal(tlsRequired());
      return;
    }
    const check = checkStartup(message, this.options.regions);
    if (!check.ok) {
      this.fatal(check.error);
      return;
    }
    this.startup = { bytes, user: check.user };
    this.clearStartupTimer();
    const method = this.options.method;
    if (method === "trust") {
      this.handOn();
      return;
    }
    const withoutPassword = this.options.withoutPassword;
    if (withoutPassword?.roles.has(check.user) === true) {
      this.phase = "looking-up";
      withoutPassword.check(check.user).then(
        (refused) => {
          if (this.phase === "done") return;
          if (refused === null) {
            this.options.throttle.succeeded(this.address);
            this.handOn();
            return;
          }
          this.answer({ kind: "fail", error: refused, wrongPassword: true, reason: refused.message });
        },
        (error: unknown) => {
          this.options.log.error(
            { err: error },
            "login without a password: the home region could not be asked",
          );
          this.fatal(verifierLookupFailed(error));
        },
      );
      return;
    }
    this.phase = "looking-up";
    this.options.store.get(check.user).then(
      (credential) => {
        if (this.phase === "done") return;
        const endPoint = this.encrypted ? (this.options.tls?.endPoint ?? null) : null;
        this.exchange = new LoginExchange(check.user, method, credential, this.options.mockSecret, endPoint);
        this.phase = "authenticating";
        this.stream.write(this.exchange.begin());
        this.pump();
      },
      (error: unknown) => {
        this.options.log.error({ err: error }, "verifier lookup failed");
        this.fatal(verifierLookupFailed(error));
      },
    );
  }

  private answer(step: LoginStep): void {
    switch (step.kind) {
      case "continue":
        this.stream.write(step.send);
        return;
      case "ok":
        if (step.send.length > 0) this.stream.write(step.send);
        this.options.throttle.succeeded(this.address);
        if (step.proved !== null) this.options.passthrough?.remember(this.startup!.user, step.proved);
        this.handOn();
        return;
      case "fail": {
        if (!step.wrongPassword) {
          this.fatal(step.error);
          return;
        }
        const delay = this.options.throttle.failed(this.address);
        // The reason goes to the log only: the client gets the same answer whatever it is.
        this.options.log.info(
          { user: this.startup?.user, address: this.address, delay, reason: step.reason },
          "login failed",
        );
        this.phase = "delaying";
        // Waiting out the delay must not keep others from logging in.
        this.slots.startDelay(this);
        const sleep = this.options.sleep ?? defaultSleep;
        void sleep(delay).then(() => this.fatal(step.error));
        return;
      }
    }
  }

  /** The session takes over: the StartupMessage, then whatever the client sent after it. */
  private handOn(): void {
    const startup = this.startup!;
    const rest = this.framer.takeBuffered();
    const stream = this.stream;
    this.unlisten();
    stream.pause();
    stream.unshift(rest.length === 0 ? startup.bytes : Buffer.concat([startup.bytes, rest]));
    this.finish({ socket: stream, user: startup.user, encrypted: this.encrypted });
  }

  private clearStartupTimer(): void {
    if (this.startupTimer === null) return;
    clearTimeout(this.startupTimer);
    this.startupTimer = null;
  }

  private closeSilently(): void {
    if (this.phase === "done") return;
    const stream = this.stream;
    this.finish(null);
    stream.destroy();
  }

  private fatal(error: PgError): void {
    if (this.phase === "done") return;
    const stream = this.stream;
    this.finish(null);
    endConnection(stream, encodeErrorResponse(error));
  }

  private finish(admitted: Admitted | null): void {
    if (this.phase === "done") return;
    this.phase = "done";
    clearTimeout(this.timer);
    this.clearStartupTimer();
    this.slots.done(this);
    if (admitted === null) this.unlisten();
    this.stream.on("error", noop);
    this.resolve(admitted);
  }
}

export function noop(): void {}

/** Terminate ('X', length 4): a client that leaves before its StartupMessage. */
function isTerminate(chunk: Buffer): boolean {
  return chunk.length >= 5 && chunk[0] === 0x58 && chunk.readInt32BE(1) === 4;
}

/**
 * Sends the last bytes and closes. The socket is read to its end, and destroyed after a second
 * whatever the client does: a client that never reads nor closes must not hold it open.
 */
export function endConnection(socket: Socket, last?: Buffer): void {
  if (socket.destroyed) return;
  socket.resume();
  if (last === undefined) socket.end();
  else socket.end(last);
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
