import { describe, expect, it } from "vitest";
import { OwedReady } from "../src/owed-ready.js";

/** A frontend message built by hand: code byte, int32 length (itself included), body. */
function message(code: string, body = ""): Buffer {
  const payload = Buffer.from(body);
  const bytes = Buffer.alloc(5 + payload.length);
  bytes.write(code, 0, "latin1");
  bytes.writeInt32BE(4 + payload.length, 1);
  payload.copy(bytes, 5);
  return bytes;
}

const query = (sql: string) => message("Q", `${sql}\0`);

/** Feeds `bytes` split at every point (and byte by byte) and returns each ledger. */
function everySplit(bytes: Buffer): OwedReady[] {
  const ledgers: OwedReady[] = [];
  for (let at = 0; at <= bytes.length; at++) {
    const ledger = new OwedReady();
    ledger.wrote(bytes.subarray(0, at));
    ledger.wrote(bytes.subarray(at));
    ledgers.push(ledger);
  }
  const bytewise = new OwedReady();
  for (let i = 0; i < bytes.length; i++) bytewise.wrote(bytes.subarray(i, i + 1));
  ledgers.push(bytewise);
  return ledgers;
}

describe("OwedReady", () => {
  it("is at rest before anything is written", () => {
    expect(new OwedReady().atRest).toBe(true);
  });

  it("owes one ReadyForQuery per Query, however the bytes are split", () => {
    const bytes = Buffer.concat([query("SET work_mem = '8MB'"), query("SELECT pg_sleep(1)")]);
    for (const ledger of everySplit(bytes)) {
      expect(ledger.atRest).toBe(false);
      ledger.answered();
      // The first statement's answer: the second still runs.
      expect(ledger.atRest).toBe(false);
      ledger.answered();
      expect(ledger.atRest).toBe(true);
    }
  });

  it("is not at rest mid extended batch until its Sync is answered", () => {
    const batch = [
      message("P", "\0SELECT 1\0\0\0"),
      message("B", "\0\0\0\0\0\0\0\0"),
      message("E", "\0\0\0\0\0"),
    ];
    const ledger = new OwedReady();
    for (const part of batch) ledger.wrote(part);
    ledger.wrote(message("H"));
    expect(ledger.atRest).toBe(false);
    ledger.wrote(message("S"));
    expect(ledger.atRest).toBe(false);
    ledger.answered();
    expect(ledger.atRest).toBe(true);
  });

  it("skips the bodies of CopyData, whatever bytes they hold", () => {
    const data = message("d", "Q\0\0\0\x05S\0\0\0\x04");
    for (const ledger of everySplit(Buffer.concat([query("COPY t FROM STDIN"), data, message("c")]))) {
      ledger.answered();
      expect(ledger.atRest).toBe(true);
    }
  });

  it("is not at rest while a write ended inside a message", () => {
    const ledger = new OwedReady();
    const bytes = query("SELECT 1");
    ledger.wrote(bytes.subarray(0, 3));
    expect(ledger.atRest).toBe(false);
    ledger.wrote(bytes.subarray(3));
    ledger.answered();
    expect(ledger.atRest).toBe(true);
  });

  it("ignores a ReadyForQuery it did not ask for", () => {
    const ledger = new OwedReady();
    ledger.answered();
    ledger.wrote(query("SELECT 1"));
    expect(ledger.atRest).toBe(false);
    ledger.answered();
    expect(ledger.atRest).toBe(true);
  });
});
