import type { Socket } from "node:net";
import {
  type CancelRequest,
  copyFrame,
  decodeStartupPacket,
  FaultReason,
  type Frame,
  FrontendCode,
  FrontendFramer,
  isProtocolFault,
  Messages,
  type PgError,
  protocolViolation,
  STARTUP_FRAME_CODE,
  type StartupMessage,
} from "@geo/proto";
import { internalError, messageTooLong, unexpectedMessage } from "../errors/catalog.js";
import { ClientWriter } from "../executor/client-writer.js";
import type { Leg } from "../executor/leg.js";
import type { Logger } from "../log.js";

export const SESSION_PHASES = ["startup", "login", "ready", "closed"] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** What the session does with what the client sends. */
export interface ClientHandler {
  /** A StartupMessage: the login begins (messages behind it wait until `ready`). */
  startup(message: StartupMessage): void;
  /** A CancelRequest on a connection of its own. */
  cancelRequest(request: CancelRequest): void;
  /**
   * Takes a Query with nothing before it waiting: `run` returns true when the session sent it at
   * once from the data handler (`frame` is a view, valid during the call); `laneFinished` follows
   * once it is answered.
   */
  readonly fastLane: { run(frame: Frame): boolean };
  /** One message after login, in order: the next waits until this one's promise settles. */
  handle(frame: Frame): Promise<void>;
  /** The message was handled (for the session's counters). */
  handled(code: number): void;
  /** Ends the client's connection with a FATAL error. */
  fatal(error: PgError): void;
}

/**
 * Where the client's COPY data goes while its COPY FROM STDIN runs: one backend's connection
 * (the statement went to one region), or the proxy's own reader that splits the rows by key.
 */
export interface CopySink {
  /**
   * One CopyData, CopyDone or CopyFail (a view, valid only during the call). A promise means
   * "stop reading the client until it settles" (a backend reads slower than the client sends).
   */
  take(frame: Frame): Promise<void> | null;
}

/** Past this many waiting messages the socket stops being read; below the low mark it resumes. */
const INBOX_HIGH = 256;
const INBOX_LOW = 32;

/**
 * One client socket: the framer, the one startup parse, the inbox of messages waiting their turn,
 * the writer, the phase, and the COPY data that goes straight to a backend. Messages are handed
 * to the session one at a time, in order; bad bytes end this client only.
 */
export class ClientConnection {
  phase: SessionPhase = "startup";
  readonly writer: ClientWriter;
  /** Where the data of a COPY FROM STDIN of the client's goes, until CopyDone or CopyFail. */
  private copyIn: CopySink | null = null;
  /** The backend connection behind `copyIn`, when the COPY went to one region. */
  private copyLeg: Leg | null = null;
  /**
   * CopyDone and CopyFail messages passed on so far: whether one came between two points of the
   * client's stream (a Sync sent before it was sent during copy-in mode).
   */
  copyEnds = 0;
  private readonly framer: FrontendFramer;
  private readonly inbox: Frame[] = [];
  private processing = false;

  constructor(
    readonly socket: Socket,
    private readonly handler: ClientHandler,
    private readonly log: Logger,
    /** `[server] max_message_bytes`: the longest message accepted once logged in. */
    private readonly maxMessageBytes: number,
  ) {
    this.framer = new FrontendFramer({ maxLength: maxMessageBytes });
    this.writer = new ClientWriter(socket);
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
  }

  /** True while a message is being handled or waits to be. */
  get busy(): boolean {
    return this.processing || this.inbox.length > 0;
  }

  /** The login succeeded: larger messages are allowed from now on. */
  authenticated(): void {
    this.framer.markAuthenticated();
  }

  /** The login was answered: messages pipelined behind the StartupMessage are handled now. */
  ready(): void {
    this.phase = "ready";
    this.kick();
  }

  /** The backend asked for the client's COPY data: what the client already sent goes first. */
  copyInto(leg: Leg): void {
    this.attachCopy(legSink(leg), leg);
  }

  /** The client's COPY data goes to `sink` from now on, starting with what it already sent. */
  copyFrom(sink: CopySink): void {
    this.attachCopy(sink, null);
  }

  private attachCopy(sink: CopySink, leg: Leg | null): void {
    this.copyIn = sink;
    this.copyLeg = leg;
    while (this.copyIn !== null && this.inbox.length > 0 && isCopyFromClient(this.inbox[0]!.code)) {
      this.copyToBackend(this.inbox.shift()!);
    }
  }

  /** The COPY behind `sink` ended before the client's CopyDone: its data is dropped from now on. */
  copyEnded(sink: CopySink): void {
    if (this.copyIn !== sink) return;
    this.copyIn = null;
    this.copyLeg = null;
  }

  /** COPY data queued behind other messages reaches here in order: to its backend, or dropped as PostgreSQL drops it. */
  copyQueued(frame: Frame): void {
    if (this.copyIn !== null) this.copyToBackend(frame);
  }

  /** A backend connection was lost: COPY data meant for it is dropped from now on. */
  lost(leg: Leg): void {
    if (this.copyLeg !== leg) return;
    this.copyIn = null;
    this.copyLeg = null;
  }

  private onData(chunk: Buffer): void {
    if (this.phase === "closed") return;
    this.framer.push(chunk);
    for (let frame = this.framer.next(); frame !== null; frame = this.framer.next()) {
      if (isProtocolFault(frame)) {
        this.log.info({ reason: frame.message }, "client sent malformed bytes");
        this.handler.fatal(
          frame.reason === FaultReason.lengthTooLong && this.framer.phase === "ready"
            ? messageTooLong(this.maxMessageBytes, frame.message)
            : protocolViolation(frame),
        );
        return;
      }
      // COPY data goes straight to the backend while the statement waiting for it runs.
      if (this.copyIn !== null && isCopyFromClient(frame.code) && this.inbox.length === 0) {
        this.copyToBackend(frame);
        continue;
      }
      if (frame.code === STARTUP_FRAME_CODE) {
        this.onStartupFrame(frame);
        if ((this.phase as SessionPhase) === "closed") return;
        continue;
      }
      if (this.phase === "startup") {
        this.handler.fatal(unexpectedMessage(`message '${String.fromCharCode(frame.code)}' during startup`));
        return;
      }
      if (
        frame.code === FrontendCode.Query &&
        !this.processing &&
        this.inbox.length === 0 &&
        this.copyIn === null &&
        this.phase === "ready" &&
        this.handler.fastLane.run(frame)
      ) {
        // Sent already: what follows waits in the inbox until `laneFinished`, in order as ever.
        this.processing = true;
        continue;
      }
      this.inbox.push(copyFrame(frame));
    }
    if (this.inbox.length > INBOX_HIGH) this.socket.pause();
    this.kick();
  }

  /** The Query `fastQuery` took is answered: the next message may be handled. */
  laneFinished(code: number): void {
    this.processing = false;
    this.handler.handled(code);
    if (this.phase === "ready") this.kick();
  }

  private onStartupFrame(frame: Frame): void {
    if (this.phase !== "startup") {
      this.handler.fatal(unexpectedMessage("startup packet after the StartupMessage"));
      return;
    }
    const packet = decodeStartupPacket(frame.payload);
    if (isProtocolFault(packet)) {
      this.handler.fatal(protocolViolation(packet));
      return;
    }
    switch (packet.type) {
      case "SSLRequest":
      case "GSSENCRequest":
        // No encryption offered to clients here: 'N', and the client continues in clear (or gives up).
        this.writer.write(Messages.sslRefused);
        return;
      case "CancelRequest":
        // PostgreSQL answers a CancelRequest with nothing and closes.
        this.phase = "closed";
        this.handler.cancelRequest(packet);
        this.socket.end();
        return;
      case "StartupMessage":
        this.phase = "login";
        this.handler.startup(packet);
        return;
    }
  }

  private copyToBackend(frame: Frame): void {
    const sink = this.copyIn!;
    if (frame.code !== FrontendCode.CopyData) {
      this.copyIn = null;
      this.copyLeg = null;
      this.copyEnds++;
    }
    const wait = sink.take(frame);
    if (wait !== null && !this.socket.isPaused()) {
      // A backend reads slower than the client sends: stop reading the client meanwhile.
      this.socket.pause();
      void wait.then(() => {
        if (this.inbox.length < INBOX_HIGH) this.socket.resume();
      });
    }
  }

  private kick(): void {
    if (this.processing || this.inbox.length === 0 || this.phase !== "ready") return;
    this.processing = true;
    this.process()
      .catch((error: unknown) => {
        this.log.error({ err: error }, "session failed");
        this.handler.fatal(internalError(error));
      })
      .finally(() => {
        this.processing = false;
        if (this.phase === "ready") this.kick();
      });
  }

  private async process(): Promise<void> {
    while (this.inbox.length > 0 && this.phase === "ready") {
      const frame = this.inbox.shift()!;
      if (this.inbox.length < INBOX_LOW && this.socket.isPaused()) this.socket.resume();
      await this.handler.handle(frame);
      this.handler.handled(frame.code);
    }
  }
}

function isCopyFromClient(code: number): boolean {
  return code === FrontendCode.CopyData || code === FrontendCode.CopyDone || code === FrontendCode.CopyFail;
}

/** A COPY relayed to one backend: the client's messages go to its connection as they are. */
function legSink(leg: Leg): CopySink {
  return {
    take: (frame) => {
      if (leg.broken !== null) return null;
      // Copied: the framer reuses its buffer, and the socket keeps what it was given until sent.
      return leg.write(Buffer.from(frame.bytes)) ? null : leg.connection.drained();
    },
  };
}
