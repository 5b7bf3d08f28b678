import { canonicalKey, type Directory, shardFor, type Topology } from "@geo/core";
import { decodeCopyFail, type Frame, FrontendCode, isProtocolFault, type PgError } from "@geo/proto";
import type { CopySink } from "../wire/client-connection.js";
import { CopyDataBatch } from "./copy-data-batch.js";
import { copyCancelled, copyRowElsewhere, copyRowUnroutable } from "./copy-errors.js";
import type { RegionCopy } from "./region-copy.js";
import { type KeyField, nullKey, type RowFault, type RowHandler, type RowReader } from "./row-reader.js";

/** How a COPY's client stream ended. */
export type CopyOutcome =
  | { readonly kind: "done" }
  /** A row could not be routed (its error), or a region failed while rows still flowed. */
  | { readonly kind: "failed"; readonly error: PgError | null; readonly region?: RegionCopy }
  /** The client sent CopyFail. */
  | { readonly kind: "client-failed"; readonly message: string };

/** Where each row goes: by its key, or to every region (a replicated table written everywhere). */
export type RowPlacement =
  | {
      readonly kind: "by-key";
      readonly key: KeyField;
      readonly topology: Topology;
      readonly directory: Directory;
      /** New keys are listed per region, to record as first writes. */
      readonly recordNewKeys: boolean;
      /** A `geo: region=` hint: every row must live there. */
      readonly hinted?: string;
    }
  | { readonly kind: "everywhere" };

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const BINARY_TRAILER = Buffer.from([0xff, 0xff]);

/**
 * The client's side of a COPY FROM STDIN spread over regions: each CopyData is read into rows
 * (the reader), each row goes to the batch of its key's region (as INSERT places a key: its
 * directory entry, or for a new key the home location's hashed shard), and a batch that fills up
 * is written to its region. While any region's connection has more buffered than its socket's
 * limit, the client is not read (the promise `take` returns), so memory stays bounded by the
 * slowest region.
 */
export class CopySplit implements CopySink, RowHandler {
  readonly outcome: Promise<CopyOutcome>;
  /** Rows routed to each region, by its index in `copies`. */
  readonly rowsTo: number[];
  /** Keys with no directory entry, per region index: first writes. */
  readonly newKeys: Set<string>[];
  reader!: RowReader;
  private readonly batches: CopyDataBatch[];
  private readonly index = new Map<string, number>();
  private fault: PgError | null = null;
  private waits: Promise<void>[] = [];
  private settled = false;
  private resolve!: (outcome: CopyOutcome) => void;

  constructor(
    private readonly copies: readonly RegionCopy[],
    private readonly placement: RowPlacement,
    /** The table as named in errors. */
    private readonly table: string,
    private readonly binary: boolean,
  ) {
    this.outcome = new Promise((resolve) => {
      this.resolve = resolve;
    });
    this.batches = copies.map(() => new CopyDataBatch());
    this.rowsTo = copies.map(() => 0);
    this.newKeys = copies.map(() => new Set<string>());
    for (const [i, copy] of copies.entries()) this.index.set(copy.region, i);
  }

  take(frame: Frame): Promise<void> | null {
    if (this.settled) return null;
    switch (frame.code) {
      case FrontendCode.CopyData: {
        const fault = this.reader.push(frame.payload);
        if (this.failedOn(fault)) return null;
        return this.backpressure();
      }
      case FrontendCode.CopyDone: {
        const fault = this.reader.end();
        if (this.failedOn(fault)) return null;
        this.end({ kind: "done" });
        return null;
      }
      case FrontendCode.CopyFail: {
        const decoded = decodeCopyFail(frame.payload);
        this.end({ kind: "client-failed", message: isProtocolFault(decoded) ? "" : decoded.message });
        return null;
      }
      default:
        return null;
    }
  }

  /** A region failed while rows flowed: nothing more is read, and the other regions are stopped. */
  regionFailed(copy: RegionCopy): void {
    this.end({ kind: "failed", error: copy.error, region: copy });
  }

  /** A CancelRequest, or the client left: whatever it sent is abandoned. */
  cancel(): void {
    this.end({ kind: "failed", error: copyCancelled() });
  }

  prefix(bytes: Buffer): void {
    for (let i = 0; i < this.copies.length; i++) this.send(i, bytes);
  }

  row(bytes: Buffer, key: string | null | undefined, line: number): void {
    if (this.fault !== null) return;
    const placement = this.placement;
    if (placement.kind === "everywhere") {
      for (let i = 0; i < this.copies.length; i++) this.send(i, bytes);
      return;
    }
    if (key == null) {
      this.fault = copyRowUnroutable(this.table, nullKey(line, placement.key));
      return;
    }
    const { topology, directory } = placement;
    const keyType = topology.routing.keyType;
    let region: string;
    let canonical: string | null = null;
    if (keyType === "integer" && !INTEGER_TEXT.test(key)) {
      // Not an integer: PostgreSQL refuses the row wherever it goes; home gives that error.
      region = topology.home.id;
    } else {
      canonical = canonicalKey(key, keyType);
      const listed = directory.lookup(canonical);
      region = listed ?? shardFor(canonical, keyType, topology.homeShards);
      if (listed !== undefined) canonical = null;
    }
    const index = this.index.get(region);
    if (index === undefined) {
      this.fault = copyRowElsewhere(this.table, line, key, region, placement.hinted ?? "");
      return;
    }
    if (canonical !== null && placement.recordNewKeys) this.newKeys[index]!.add(canonical);
    this.rowsTo[index]!++;
    this.send(index, bytes);
  }

  /** What is left for region `i` after the client's CopyDone: its last batch, and the binary trailer. */
  remainder(i: number): Buffer | null {
    const batch = this.batches[i]!;
    if (this.binary) {
      const full = batch.add(BINARY_TRAILER);
      const last = batch.take();
      return full === null ? last : last === null ? full : Buffer.concat([full, last]);
    }
    return batch.take();
  }

  private send(i: number, bytes: Buffer): void {
    const full = this.batches[i]!.add(bytes);
    if (full === null) return;
    const copy = this.copies[i]!;
    if (!copy.write(full)) this.waits.push(copy.drained());
  }

  private backpressure(): Promise<void> | null {
    if (this.waits.length === 0) return null;
    const waits = this.waits;
    this.waits = [];
    return Promise.all(waits).then(() => undefined);
  }

  private failedOn(fault: RowFault | null): boolean {
    const error = this.fault ?? (fault === null ? null : copyRowUnroutable(this.table, fault));
    if (error === null) return false;
    this.end({ kind: "failed", error });
    return true;
  }

  private end(outcome: CopyOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(outcome);
  }
}
