import { FakeBackend } from "@geo/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { Coordinator } from "../src/index.js";
import { MemoryDecisionLog } from "./support/memory-decision-log.js";
import { PgConnection, PgConnector } from "./support/pg.js";

/** Three fake servers on real sockets, driven through node-postgres: the wire errors are the real ones. */
let fakes: FakeBackend[] = [];
let connections: PgConnection[] = [];

afterEach(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await Promise.all(fakes.map((f) => f.close()));
  fakes = [];
  connections = [];
});

async function begin(): Promise<{ participants: PgConnection[]; connector: PgConnector }> {
  fakes = await Promise.all([0, 1, 2].map(() => FakeBackend.start({ unknownStatements: "empty" })));
  const urls = new Map(fakes.map((f, i) => [`r${i}`, f.url()]));
  const participants = await Promise.all([...urls].map(([region, url]) => PgConnection.open(region, url)));
  connections.push(...participants);
  for (const participant of participants) {
    await participant.query("BEGIN");
    await participant.query("INSERT INTO t VALUES (1)");
  }
  return { participants, connector: new PgConnector(urls) };
}

describe("two-phase commit against the testkit's fake backends", () => {
  it("rolls back every prepared participant and passes on the refusal's SQLSTATE", async () => {
    const { participants } = await begin();
    fakes[2]!.inject({ refusePrepareTransaction: "23505" });
    const log = new MemoryDecisionLog();
    const coordinator = new Coordinator({ prefix: "geo_fake", log });
    const gid = coordinator.newGid();
    await expect(coordinator.commit(participants, { gid })).rejects.toMatchObject({
      code: "23505",
      region: "r2",
    });
    for (const fake of fakes) {
      expect(fake.preparedTransactions.size).toBe(0);
      expect(fake.statements.map((s) => s.sql)).not.toContain(`COMMIT PREPARED '${gid}'`);
    }
    expect(fakes[0]!.statements.map((s) => s.sql)).toContain(`ROLLBACK PREPARED '${gid}'`);
    expect(await log.lookup(gid)).toBeUndefined();
  });

  it("rolls back on a fresh connection a PREPARE whose answer was lost with its connection", async () => {
    const { participants, connector } = await begin();
    fakes[1]!.inject({ dropAfterPrepareTransaction: true });
    const log = new MemoryDecisionLog();
    const coordinator = new Coordinator({ prefix: "geo_fake", log, connector });
    const gid = coordinator.newGid();
    await expect(coordinator.commit(participants, { gid })).rejects.toMatchObject({
      code: "40001",
      region: "r1",
    });
    for (const fake of fakes) expect(fake.preparedTransactions.size).toBe(0);
    expect(await log.lookup(gid)).toBeUndefined();
    expect(coordinator.inDoubt()).toEqual([]);
  });

  it("records an abort for recovery when the lost PREPARE's region cannot be reached again", async () => {
    const { participants } = await begin();
    fakes[1]!.inject({ dropAfterPrepareTransaction: true });
    const log = new MemoryDecisionLog();
    const coordinator = new Coordinator({ prefix: "geo_fake", log });
    const gid = coordinator.newGid();
    await expect(coordinator.commit(participants, { gid })).rejects.toMatchObject({ code: "40001" });
    expect([...fakes[1]!.preparedTransactions]).toEqual([gid]);
    expect((await log.lookup(gid))?.decision).toBe("abort");
    expect(coordinator.inDoubt()).toMatchObject([{ gid, decided: false, unresolved: ["r1"] }]);
    expect(fakes[0]!.preparedTransactions.size).toBe(0);
  });
});
