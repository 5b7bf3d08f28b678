import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { HoldRegistry, type Ticket } from "./hold-registry.js";

function ticket(value: Ticket | PgError): Ticket {
  if (value instanceof PgError) throw value;
  return value;
}

describe("HoldRegistry", () => {
  it("admits a statement at once when no move holds its key", async () => {
    const holds = new HoldRegistry();
    holds.hold(["bob"]);
    const admitted = await holds.admit({ kind: "keys", keys: ["alice"] }, 1000, false);
    expect(admitted).not.toBeInstanceOf(PgError);
  });

  it("makes a statement for a held key wait until the hold is released", async () => {
    const holds = new HoldRegistry();
    const hold = holds.hold(["alice"]);
    let admitted = false;
    const waiting = holds.admit({ kind: "keys", keys: ["alice"] }, 5000, false).then((value) => {
      admitted = true;
      return value;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(admitted).toBe(false);
    hold.release();
    expect(await waiting).not.toBeInstanceOf(PgError);
  });

  it("refuses with 40001 a statement that waited longer than hold_ms", async () => {
    const holds = new HoldRegistry();
    holds.hold(["alice"]);
    const refused = await holds.admit({ kind: "keys", keys: ["alice"] }, 20, false);
    expect(refused).toBeInstanceOf(PgError);
    expect((refused as PgError).code).toBe("40001");
  });

  it("refuses at once a statement whose transaction already did work", async () => {
    const holds = new HoldRegistry();
    holds.hold(["alice"]);
    const started = Date.now();
    const refused = await holds.admit({ kind: "keys", keys: ["alice"] }, 5000, true);
    expect((refused as PgError).code).toBe("40001");
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("holds a statement that may touch any key while any move is under way", async () => {
    const holds = new HoldRegistry();
    holds.hold(["alice"]);
    const refused = await holds.admit({ kind: "any" }, 10, false);
    expect((refused as PgError).code).toBe("40001");
    expect(await holds.admit({ kind: "none" }, 10, false)).not.toBeInstanceOf(PgError);
  });

  it("lets a move wait for statements admitted on its keys before it copies", async () => {
    const holds = new HoldRegistry();
    const running = ticket(await holds.admit({ kind: "keys", keys: ["alice"] }, 1000, false));
    const hold = holds.hold(["alice"]);
    expect(await holds.drained(hold, 20)).toBe(false);
    setTimeout(() => running.release(), 10);
    expect(await holds.drained(hold, 1000)).toBe(true);
    hold.release();
  });

  it("lets reads through a hold of writes, and stops them once it holds reads too", async () => {
    const holds = new HoldRegistry();
    const hold = holds.hold(["alice"], "writes");
    const read = await holds.admit({ kind: "keys", keys: ["alice"] }, 20, false, true);
    expect(read).not.toBeInstanceOf(PgError);
    const write = await holds.admit({ kind: "keys", keys: ["alice"] }, 20, false, false);
    expect((write as PgError).code).toBe("40001");
    // A read of any key passes a hold of writes too; a write of any key does not.
    expect(await holds.admit({ kind: "any" }, 20, false, true)).not.toBeInstanceOf(PgError);
    expect(((await holds.admit({ kind: "any" }, 20, false, false)) as PgError).code).toBe("40001");
    hold.holdReads();
    expect(hold.mode).toBe("all");
    const later = await holds.admit({ kind: "keys", keys: ["alice"] }, 20, false, true);
    expect((later as PgError).code).toBe("40001");
    const inBlock = await holds.admit({ kind: "keys", keys: ["alice"] }, 5000, true, true);
    expect((inBlock as PgError).code).toBe("40001");
  });

  it("waits, holding writes, only for writes under way; holding reads too, for the reads as well", async () => {
    const holds = new HoldRegistry();
    const reading = ticket(await holds.admit({ kind: "keys", keys: ["alice"] }, 1000, false, true));
    const writing = ticket(await holds.admit({ kind: "keys", keys: ["alice"] }, 1000, false, false));
    const hold = holds.hold(["alice"], "writes");
    expect(await holds.drained(hold, 20)).toBe(false);
    writing.release();
    expect(await holds.drained(hold, 20)).toBe(true);
    hold.holdReads();
    expect(await holds.drained(hold, 20)).toBe(false);
    const drained = holds.drained(hold, 1000);
    reading.release();
    expect(await drained).toBe(true);
  });
});
