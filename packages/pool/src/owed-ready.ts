/**
 * Counts the ReadyForQuery messages a server still owes for the frontend bytes written to it,
 * so a connection is called at rest only when it has answered everything (one ReadyForQuery per
 * Query, Sync and FunctionCall) and no extended-protocol batch is open without its Sync. Bytes
 * are scanned by message header only, across writes that split messages anywhere.
 */
export class OwedReady {
  /** ReadyForQuery messages still to come. */
  private owed = 0;
  /** Parse/Bind/Describe/Execute/Close written since the last Sync. */
  private unsynced = false;
  /** Bytes of the current message's body still to skip. */
  private skip = 0;
  /** The header being read when a write ended inside it (code byte and length, 5 bytes). */
  private readonly header = Buffer.alloc(5);
  private headerFill = 0;

  get atRest(): boolean {
    return this.owed === 0 && !this.unsynced && this.headerFill === 0 && this.skip === 0;
  }

  /** Called with every chunk written to the server, in order. */
  wrote(chunk: Buffer): void {
    let at = 0;
    const end = chunk.length;
    while (at < end) {
      if (this.skip > 0) {
        const step = Math.min(this.skip, end - at);
        this.skip -= step;
        at += step;
        continue;
      }
      if (this.headerFill === 0 && end - at >= 5) {
        this.begin(chunk[at]!, chunk.readInt32BE(at + 1));
        at += 5;
        continue;
      }
      const step = Math.min(5 - this.headerFill, end - at);
      chunk.copy(this.header, this.headerFill, at, at + step);
      this.headerFill += step;
      at += step;
      if (this.headerFill === 5) {
        this.headerFill = 0;
        this.begin(this.header[0]!, this.header.readInt32BE(1));
      }
    }
  }

  /** Called for every ReadyForQuery the server sends. */
  answered(): void {
    if (this.owed > 0) this.owed--;
  }

  private begin(code: number, length: number): void {
    this.skip = Math.max(0, length - 4);
    switch (code) {
      case 0x51: // Query
      case 0x46: // FunctionCall
        this.owed++;
        return;
      case 0x53: // Sync
        this.owed++;
        this.unsynced = false;
        return;
      case 0x50: // Parse
      case 0x42: // Bind
      case 0x44: // Describe
      case 0x45: // Execute
      case 0x43: // Close
        this.unsynced = true;
        return;
      default:
      // Flush, CopyData, CopyDone, CopyFail, Terminate: no ReadyForQuery of their own.
    }
  }
}
