import {
  BackendCode,
  decodeErrorResponse,
  encodeCopyFail,
  encodeQuery,
  isProtocolFault,
  Messages,
  PgError,
} from "@geo/proto";
import type { Leg } from "../executor/leg.js";

export const REGION_COPY_PHASES = ["idle", "starting", "copying", "ending", "done"] as const;
export type RegionCopyPhase = (typeof REGION_COPY_PHASES)[number];

/**
 * One region's part of a COPY FROM STDIN the proxy splits: the statement sent on the session's
 * connection there, its CopyData written as rows are routed, and its answer read here instead of
 * relayed (CopyInResponse, then CommandComplete `COPY n`, or an error, then ReadyForQuery). When
 * the region fails while rows still flow (a constraint, a lost connection), `onFailed` says so at
 * once: the other regions are then stopped too.
 */
export class RegionCopy {
  phase: RegionCopyPhase = "idle";
  error: PgError | null = null;
  /** The CommandComplete tag, `COPY n`. */
  tag = "";
  /** The CopyInResponse as the region sent it. */
  response: Buffer | null = null;
  onFailed: ((copy: RegionCopy) => void) | null = null;
  private settleStart: (() => void) | null = null;
  private settleEnd: (() => void) | null = null;
  private readonly started: Promise<void>;
  private readonly ended: Promise<void>;
  private unsubscribe: (() => void) | null = null;

  constructor(
    readonly leg: Leg,
    /** Gives the connection's frames back to the session once the region is idle again. */
    private readonly restore: (leg: Leg) => void,
  ) {
    this.started = new Promise((resolve) => {
      this.settleStart = resolve;
    });
    this.ended = new Promise((resolve) => {
      this.settleEnd = resolve;
    });
  }

  get region(): string {
    return this.leg.region;
  }

  /** Sends the COPY statement; resolves once the region waits for data, or answered with an error. */
  start(sql: string): Promise<void> {
    const connection = this.leg.connection;
    const broken = connection.brokenError;
    if (broken !== null) {
      this.error = broken;
      this.phase = "done";
      this.settle();
      return this.started;
    }
    this.phase = "starting";
    this.unsubscribe = connection.onBroken((lost) => this.onBroken(lost));
    connection.setReceiver({ onFrame: (frame) => this.onFrame(frame.code, frame.bytes, frame.payload) });
    this.leg.write(encodeQuery({ sql }));
    return this.started;
  }

  /** Writes CopyData messages; false when the connection's buffer is full (see `drained`). */
  write(bytes: Buffer): boolean {
    if (this.phase !== "copying" || this.leg.broken !== null) return true;
    return this.leg.write(bytes);
  }

  drained(): Promise<void> {
    return this.leg.connection.drained();
  }

  /** Ends the data with CopyDone (after `last`, when given); resolves at the region's ReadyForQuery. */
  finish(last: Buffer | null): Promise<void> {
    if (this.phase === "copying" && this.leg.broken === null) {
      this.phase = "ending";
      this.leg.write(last === null ? Messages.copyDone : [last, Messages.copyDone]);
    }
    return this.ended;
  }

  /** Ends the data with CopyFail: the region rolls its COPY back; resolves at its ReadyForQuery. */
  abort(message: string): Promise<void> {
    if (this.phase === "copying" && this.leg.broken === null) {
      this.phase = "ending";
      this.leg.write(encodeCopyFail({ message }));
    }
    return this.ended;
  }

  private onFrame(code: number, bytes: Buffer, payload: Buffer): void {
    switch (code) {
      case BackendCode.CopyInResponse:
        this.response = Buffer.from(bytes);
        this.phase = "copying";
        this.settleStart?.();
        return;
      case BackendCode.CommandComplete: {
        const nul = payload.indexOf(0);
        this.tag = payload.toString("latin1", 0, nul === -1 ? payload.length : nul);
        return;
      }
      case BackendCode.ErrorResponse: {
        const decoded = decodeErrorResponse(payload);
        if (this.error === null && !isProtocolFault(decoded)) this.error = PgError.fromFields(decoded.fields);
        return;
      }
      case BackendCode.ReadyForQuery: {
        const failedWhileCopying = this.phase === "copying" && this.error !== null;
        this.phase = "done";
        this.settle();
        this.restore(this.leg);
        if (failedWhileCopying) this.onFailed?.(this);
        return;
      }
      default:
        // Notices and parameter changes of the region's COPY: the client hears them from nowhere
        // else, but one server's COPY sends none that a client needs.
        return;
    }
  }

  private onBroken(lost: PgError): void {
    this.error ??= lost;
    const wasCopying = this.phase === "copying";
    this.phase = "done";
    this.settle();
    if (wasCopying) this.onFailed?.(this);
  }

  private settle(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.settleStart?.();
    this.settleStart = null;
    this.settleEnd?.();
    this.settleEnd = null;
  }
}
