import { MemoryDirectory, parseConfig } from "@geo/core";
import { FakeBackend } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { ByteClient } from "./support/byte-client.js";
import { KEYS, REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";

// The fast lane over three regions of fake backends, against a proxy without it on the same
// fakes: a statement of one region takes the lane, one of several regions does not, and a
// connection that breaks mid-result answers the same bytes either way.

const ROWS = Array.from({ length: 40 }, (_, i) => [`row ${i}`, i] as const);

let fakes: Record<RegionName, FakeBackend>;
let lane: RunningProxy;
let general: RunningProxy;

async function proxyWith(node: string, fastLane: boolean): Promise<RunningProxy> {
  const ports = REGIONS.map((region) => fakes[region].port);
  return startProxy({
    config: parseConfig(regionsToml(ports, "", `node = "${node}"\nfast_lane = ${fastLane}`), `${node}.toml`),
    directory: new MemoryDirectory(Object.entries(KEYS)),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
}

beforeAll(async () => {
  const started = await Promise.all(
    REGIONS.map(() =>
      FakeBackend.start({
        unknownStatements: "empty",
        rules: [
          {
            match: /FROM users WHERE tenant_id = '[a-z]+' ORDER BY/,
            reply: { columns: ["name", { name: "age", typeOid: 23 }], rows: ROWS },
          },
          { match: /count\(\*\)/, reply: { columns: [{ name: "count", typeOid: 20 }], rows: [[3]] } },
          { match: /breaks midway/, reply: { columns: ["name"], rows: ROWS, closeAfterRows: 7 } },
        ],
      }),
    ),
  );
  fakes = Object.fromEntries(REGIONS.map((region, i) => [region, started[i]!])) as Record<
    RegionName,
    FakeBackend
  >;
  lane = await proxyWith("lane", true);
  general = await proxyWith("general", false);
});

afterAll(async () => {
  await lane?.close({ timeoutMs: 200 });
  await general?.close({ timeoutMs: 200 });
  await Promise.all(Object.values(fakes ?? {}).map((fake) => fake.close()));
});

describe("the fast lane over several regions", () => {
  it("takes one region's statements and leaves those of several regions to the general path, with the same bytes", async () => {
    const onLane = await ByteClient.connect(lane.port);
    const onGeneral = await ByteClient.connect(general.port);
    try {
      // Each region's first statement replays the session's settings on its connection.
      for (const key of Object.keys(KEYS)) {
        const warm = `SELECT name, age FROM users WHERE tenant_id = '${key}' ORDER BY id`;
        await onLane.query(warm);
        await onGeneral.query(warm);
      }
      for (const [sql, expected] of [
        ["SELECT name, age FROM users WHERE tenant_id = 'alice' ORDER BY id", true],
        ["SELECT name, age FROM users WHERE tenant_id = 'bob' ORDER BY id", true],
        ["SELECT name, age FROM users WHERE tenant_id = 'chandra' ORDER BY id", true],
        ["/* geo: region=us-east */ SELECT name FROM users WHERE tenant_id = 'bob' ORDER BY id", true],
        ["SELECT count(*) FROM users", false],
        ["SELECT count(*) FROM users WHERE tenant_id IN ('alice', 'bob')", false],
        ["SELECT name FROM users WHERE age > 3", false],
      ] as const) {
        const before = lane.runtime.fastLane.statements;
        const bytes = await onLane.query(sql);
        expect({ sql, took: lane.runtime.fastLane.statements > before }).toEqual({ sql, took: expected });
        expect({ sql, bytes: bytes.toString("base64") }).toEqual({
          sql,
          bytes: (await onGeneral.query(sql)).toString("base64"),
        });
      }
      expect(general.runtime.fastLane.statements).toBe(0);
    } finally {
      onLane.close();
      onGeneral.close();
    }
  });

  it("answers a connection lost mid-result with the rows so far, 08006 and ReadyForQuery, and the session goes on", async () => {
    const answers: string[][] = [];
    for (const proxy of [lane, general]) {
      const client = await ByteClient.connect(proxy.port);
      try {
        const warm = "SELECT name, age FROM users WHERE tenant_id = 'alice' ORDER BY id";
        await client.query(warm);
        const before = lane.runtime.fastLane.statements;
        const broken = await client.query(
          "SELECT name FROM users WHERE tenant_id = 'alice' /* breaks midway */",
        );
        if (proxy === lane) expect(lane.runtime.fastLane.statements).toBe(before + 1);
        const after = await client.query(warm);
        answers.push([broken.toString("base64"), after.toString("base64")]);
        expect(broken.toString("latin1")).toContain("08006");
        expect(client.closed).toBe(false);
      } finally {
        client.close();
      }
    }
    expect(answers[0]).toEqual(answers[1]);
  });
});
