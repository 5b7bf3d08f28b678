import {
  BackendCode,
  decodeParameterStatus,
  encodeCopyFail,
  encodeErrorResponse,
  encodeParameterStatus,
  encodeReadyForQuery,
  type Frame,
  isProtocolFault,
  type PgError,
  type TransactionStatus,
} from "@geo/proto";
import { endsSession, sqlStateOf } from "../observability/sql-state.js";
import type { ClientWriter } from "./client-writer.js";
import type { Leg } from "./leg.js";
import { type Entry, endsUnit, type LocalEntry, type Unit } from "./relay-unit.js";

export {
  type Entry,
  type LocalEntry,
  UNIT_KINDS,
  type Unit,
  type UnitKind,
  type UnitMode,
} from "./relay-unit.js";

/**
 * The session's output, in the order the client's messages asked for it. Backend answers are
 * relayed frame by frame as they arrive, never decoded beyond their code byte; the proxy's own
 * answers wait for their turn. Only one leg has answers outstanding at any time (the session
 * drains before switching legs), so arrival order is the client's order.
 */
export class Relay {
  private readonly queue: Entry[] = [];
  private head = 0;
  private idleWaiters: (() => void)[] = [];
  private pausedLeg: Leg | null = null;
  /** ErrorResponses sent to the client so far: how a caller tells that a statement failed. */
  errorsSent = 0;
  /** Told the SQLSTATE of each ErrorResponse sent to the client (the metrics count them). */
  onErrorSent: ((sqlstate: string) => void) | null = null;
  /** Told when a backend enters COPY FROM STDIN for the client: the client's data goes to `leg`. */
  onCopyIn: ((leg: Leg) => void) | null = null;
  /** The value of each reported parameter the client was last told: its login's, then each ParameterStatus sent. */
  readonly told = new Map<string, string>();
  /**
   * While a query string runs statement by statement: the last value each backend reported, on
   * any unit (the proxy's own statements too), held back until the string's end.
   */
  private heldReports: Map<string, string> | null = null;

  constructor(
    private readonly client: ClientWriter,
    /** An extended-protocol error was sent: the session skips the client's messages up to Sync. */
    private readonly onExtendedError: () => void,
    /** A frame arrived that no unit expected. */
    private readonly onStray: (leg: Leg, code: number) => void,
    /** The session's transaction status, for a ReadyForQuery the proxy writes itself. */
    private readonly status: () => TransactionStatus,
  ) {}

  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Resolves once every queued answer has been sent. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  expect(unit: Omit<Unit, "type" | "failed">): Unit {
    // Every field spelled out: one object shape for every unit keeps `onFrame` monomorphic, and a
    // spread of callers' differently shaped literals takes V8's slow generic copy.
    const entry: Unit = {
      type: "unit",
      leg: unit.leg,
      kind: unit.kind,
      mode: unit.mode,
      dropReadyForQuery: unit.dropReadyForQuery,
      failed: false,
      done: unit.done,
      skipped: unit.skipped,
      inspect: unit.inspect,
      expectError: unit.expectError,
    };
    unit.leg.outstanding++;
    this.queue.push(entry);
    return entry;
  }

  local(entry: Omit<LocalEntry, "type">): void {
    this.queue.push({
      type: "local",
      bytes: entry.bytes,
      error: entry.error,
      syncAnswer: entry.syncAnswer,
      effect: entry.effect,
      skipped: entry.skipped,
    });
    this.pump();
  }

  error(error: PgError, extended: boolean): void {
    this.errorsSent++;
    this.onErrorSent?.(error.code);
    this.local({ bytes: encodeErrorResponse(error), error: extended });
  }

  /**
   * From now until `releaseReports`, ParameterStatus waits. PostgreSQL reports changed settings
   * once per query string, just before its ReadyForQuery, and only those whose value differs from
   * the one last reported; a string the proxy runs as several statements gets a report after each.
   */
  holdReports(): void {
    this.heldReports ??= new Map();
  }

  /**
   * Ends `holdReports`: the ParameterStatus PostgreSQL would send before the string's
   * ReadyForQuery, each parameter whose value now differs from what the client was last told, in
   * the server's order (its settings sorted by name, case-insensitively).
   */
  releaseReports(): Buffer[] {
    const held = this.heldReports;
    this.heldReports = null;
    if (held === null) return [];
    const names = [...held.keys()].sort((a, b) => {
      const x = a.toLowerCase();
      const y = b.toLowerCase();
      return x < y ? -1 : x > y ? 1 : 0;
    });
    return this.report(names.map((name) => [name, held.get(name)!]));
  }

  /**
   * The proxy's own ParameterStatus (a value it changed with statements of its own): held while
   * `holdReports` lasts, else encoded and remembered as told.
   */
  report(values: Iterable<readonly [string, string]>): Buffer[] {
    const messages: Buffer[] = [];
    for (const [name, value] of values) {
      if (this.heldReports !== null) {
        this.heldReports.set(name, value);
        continue;
      }
      if (this.told.get(name) === value) continue;
      this.told.set(name, value);
      messages.push(encodeParameterStatus({ name, value }));
    }
    return messages;
  }

  private peek(): Entry | undefined {
    return this.queue[this.head];
  }

  private shift(): void {
    const entry = this.queue[this.head];
    this.head++;
    if (entry?.type === "unit") entry.leg.answered();
    if (this.head > 64 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.pending === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const waiter of waiters) waiter();
    }
  }

  /** Sends every local answer whose turn has come. */
  private pump(): void {
    for (let entry = this.peek(); entry?.type === "local"; entry = this.peek()) {
      this.shift();
      const bytes = typeof entry.bytes === "function" ? entry.bytes() : entry.bytes;
      if (bytes !== null) this.send(bytes, null);
      entry.effect?.();
      // The session already skips the client's messages after an error of its own.
      if (entry.error === true) this.skipToSync();
    }
  }

  /**
   * Relayed frames arrive one by one as views into the backend's read buffer, usually back to
   * back. Adjacent views are joined and written once per tick (the views stay valid until the
   * backend's next read, which comes after this tick), so a result of small rows costs one
   * socket write per chunk read rather than one per row.
   */
  private send(bytes: Buffer, from: Leg | null): void {
    const pending = this.pendingBytes;
    if (
      from !== null &&
      pending !== null &&
      from === this.pendingLeg &&
      bytes.buffer === pending.buffer &&
      bytes.byteOffset === pending.byteOffset + this.pendingLength
    ) {
      // Only the length grows here: the joined view is made once, at flush.
      this.pendingLength += bytes.length;
      return;
    }
    this.flush();
    if (from === null) {
      this.client.write(bytes);
      return;
    }
    this.pendingBytes = bytes;
    this.pendingLength = bytes.length;
    this.pendingLeg = from;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      process.nextTick(flushRelay, this);
    }
  }

  private pendingBytes: Buffer | null = null;
  /** How far the pending bytes run in their backing buffer: adjacent frames joined so far. */
  private pendingLength = 0;
  private pendingLeg: Leg | null = null;
  private flushScheduled = false;

  /** Writes the joined frames; pauses their backend while the client's socket is full. */
  flush(): void {
    const first = this.pendingBytes;
    const from = this.pendingLeg;
    this.pendingBytes = null;
    this.pendingLeg = null;
    if (first === null || from === null) return;
    const bytes =
      this.pendingLength === first.length
        ? first
        : Buffer.from(first.buffer, first.byteOffset, this.pendingLength);
    if (this.client.write(bytes) || this.pausedLeg !== null) return;
    // The client reads slower than the backend sends: stop reading the backend until it catches up.
    this.pausedLeg = from;
    from.connection.pause();
    this.client.onDrain(() => {
      this.pausedLeg = null;
      from.connection.resume();
    });
  }

  /** @internal The scheduled flush at the end of the tick. */
  scheduledFlush(): void {
    this.flushScheduled = false;
    this.flush();
  }

  /** After an error in extended mode, the backend ignores everything up to Sync: so does the output. */
  private skipToSync(): void {
    for (let entry = this.peek(); entry !== undefined; entry = this.peek()) {
      if (entry.type === "unit" && (entry.kind === "sync" || entry.expectError === true)) break;
      if (entry.type === "local" && entry.syncAnswer === true) break;
      this.shift();
      entry.skipped?.();
    }
    this.pump();
  }

  /** Every message a backend sends to the session goes through here. */
  onFrame(leg: Leg, frame: Frame): void {
    const code = frame.code;
    const entry = this.peek();
    const unit = entry?.type === "unit" && entry.leg === leg ? entry : null;
    if (code === BackendCode.ParameterStatus) {
      if (unit !== null) this.onParameterStatus(unit, frame, leg);
      return;
    }
    if (code === BackendCode.NoticeResponse || code === BackendCode.NotificationResponse) {
      if (unit === null || unit.mode === "relay" || code === BackendCode.NotificationResponse) {
        this.send(frame.bytes, leg);
      }
      return;
    }
    if (unit === null) {
      this.onStray(leg, code);
      return;
    }
    if (code === BackendCode.CopyInResponse) {
      // The client's own COPY FROM, allowed through to one region: its data goes to this leg
      // until CopyDone or CopyFail. Any other (one hidden from the analysis) is failed here.
      if (unit.mode === "relay" && this.onCopyIn !== null) {
        unit.inspect?.(frame);
        this.send(frame.bytes, leg);
        this.flush();
        this.onCopyIn(leg);
        return;
      }
      leg.write(encodeCopyFail({ message: "COPY FROM is not supported through geoproxy" }));
      return;
    }
    unit.inspect?.(frame);
    const relayed = unit.mode === "relay" || (unit.mode === "quiet" && code === BackendCode.ErrorResponse);
    if (code === BackendCode.ErrorResponse && unit.expectError === true) {
      this.finish(unit, null);
      this.pump();
      return;
    }
    if (code === BackendCode.ErrorResponse) {
      unit.failed = true;
      if (relayed) {
        this.errorsSent++;
        this.onErrorSent?.(sqlStateOf(frame.payload));
        if (endsSession(frame.payload)) leg.fatalRelayed = true;
        this.send(frame.bytes, leg);
      }
      // A Query's or a Sync's answer goes on to its ReadyForQuery (a Sync fails when the implicit
      // block's COMMIT does).
      if (unit.kind === "query" || unit.kind === "sync") return;
      this.finish(unit, null);
      if (relayed) this.onExtendedError();
      this.skipToSync();
      return;
    }
    if (code === BackendCode.ReadyForQuery) {
      if (relayed && unit.dropReadyForQuery !== true) this.send(frame.bytes, leg);
      this.finish(unit, String.fromCharCode(frame.payload[0] ?? 0x49));
      this.pump();
      return;
    }
    if (relayed) this.send(frame.bytes, leg);
    if (endsUnit(unit.kind, code)) {
      this.finish(unit, null);
      this.pump();
    }
  }

  /**
   * A backend's ParameterStatus: relayed in a relayed answer (the proxy's own replays are not the
   * client's business), or held while a string runs statement by statement.
   */
  private onParameterStatus(unit: Unit, frame: Frame, leg: Leg): void {
    if (unit.mode !== "relay" && this.heldReports === null) return;
    const message = decodeParameterStatus(frame.payload);
    if (isProtocolFault(message)) return;
    if (this.heldReports !== null) {
      this.heldReports.set(message.name, message.value);
      return;
    }
    this.told.set(message.name, message.value);
    this.send(frame.bytes, leg);
  }

  private finish(unit: Unit, status: string | null): void {
    this.shift();
    unit.done?.(unit, status);
  }

  /**
   * A leg broke: its outstanding answers will never come. The first is replaced by the error
   * (and a ReadyForQuery where a simple query expected one); the rest are skipped.
   */
  failLeg(leg: Leg, error: PgError): void {
    let reported = false;
    for (let i = this.head; i < this.queue.length; i++) {
      const entry = this.queue[i]!;
      if (entry.type !== "unit" || entry.leg !== leg) continue;
      const report = !reported && entry.mode !== "silent";
      if (report) reported = true;
      const simple = entry.kind === "query" && entry.dropReadyForQuery !== true && entry.mode === "relay";
      const replacement: LocalEntry = {
        type: "local",
        bytes: () => {
          entry.done?.({ ...entry, failed: true }, entry.kind === "query" ? "I" : null);
          const parts: Buffer[] = [];
          if (report) {
            this.errorsSent++;
            this.onErrorSent?.(error.code);
            parts.push(encodeErrorResponse(error));
          }
          if (simple) parts.push(encodeReadyForQuery({ status: this.status() }));
          return parts.length === 0 ? null : Buffer.concat(parts);
        },
        ...(report && entry.kind !== "query" && entry.kind !== "sync" ? { error: true } : {}),
      };
      leg.outstanding--;
      this.queue[i] = replacement;
    }
    this.pump();
  }
}

function flushRelay(relay: Relay): void {
  relay.scheduledFlush();
}
