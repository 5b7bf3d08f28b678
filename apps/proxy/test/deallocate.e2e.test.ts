import {
  type BackendMessage,
  encodeBind,
  encodeExecute,
  encodeParse,
  encodeQuery,
  encodeStartupMessage,
  encodeSync,
} from "@geo/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { WireClient } from "./support/wire.js";

// PostgreSQL has one namespace for statements prepared with the protocol and with SQL: psycopg
// prepares with Parse and deallocates with SQL `DEALLOCATE _pg3_N` (and DEALLOCATE ALL).
let region: OneRegion;
let sessionPooled: OneRegion;

beforeAll(async () => {
  region = await startOneRegion();
  sessionPooled = await startOneRegion({ extraToml: '\n[pool]\nmode = "session"\n' });
});
afterAll(async () => {
  await region?.close();
  await sessionPooled?.close();
});

function described(messages: readonly BackendMessage[]): string[] {
  return messages.map((m) => {
    if (m.type === "DataRow") return `DataRow ${m.values.map((v) => v?.toString()).join(",")}`;
    if (m.type === "ErrorResponse") return `Error ${(m as { fields: Record<string, string> }).fields.code}`;
    if (m.type === "CommandComplete") return `CommandComplete ${(m as { tag: string }).tag}`;
    return m.type;
  });
}

async function script(port: number): Promise<string[][]> {
  const wire = await WireClient.connect(port);
  wire.send(encodeStartupMessage({ parameters: { user: "postgres", database: "postgres" } }));
  await wire.untilReady();
  const steps: Buffer[][] = [
    [encodeParse({ name: "_pg3_1", sql: "SELECT 1 AS n", paramTypes: [] }), encodeSync()],
    [encodeQuery({ sql: "DEALLOCATE _pg3_1" })],
    [
      encodeParse({ name: "_pg3_1", sql: "SELECT 2 AS n", paramTypes: [] }),
      encodeBind({ portal: "", statement: "_pg3_1", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ],
    [encodeQuery({ sql: "BEGIN; DEALLOCATE _pg3_1; ROLLBACK" })],
    [encodeQuery({ sql: "DEALLOCATE _pg3_1" })],
    [encodeParse({ name: "_pg3_2", sql: "SELECT 3 AS n", paramTypes: [] }), encodeSync()],
    [encodeQuery({ sql: "DEALLOCATE ALL" })],
    [
      encodeBind({ portal: "", statement: "_pg3_2", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ],
  ];
  const log: string[][] = [];
  try {
    for (const step of steps) {
      wire.send(Buffer.concat(step));
      log.push(described(await wire.untilReady()));
    }
  } finally {
    wire.close();
  }
  return log;
}

describe("SQL DEALLOCATE of a statement prepared with the protocol", () => {
  it("forgets it as PostgreSQL does, by name and with DEALLOCATE ALL", async () => {
    const direct = await script(region.direct.port);
    expect(direct[2]).toContain("DataRow 2");
    expect(direct.at(-1)?.[0]).toBe("Error 26000");
    expect(await script(region.proxy.port)).toEqual(direct);
  });
});

describe("SQL DEALLOCATE with session pooling", () => {
  it("leaves pg_prepared_statements as PostgreSQL does: the client's own connection holds no copy after it", async () => {
    const listed = async (port: number): Promise<string[][]> => {
      const wire = await WireClient.connect(port);
      wire.send(encodeStartupMessage({ parameters: { user: "postgres", database: "postgres" } }));
      await wire.untilReady();
      const log: string[][] = [];
      try {
        for (const step of [
          [
            encodeParse({ name: "_pg3_7", sql: "SELECT 7 AS n", paramTypes: [] }),
            encodeBind({ portal: "", statement: "_pg3_7", paramFormats: [], params: [], resultFormats: [] }),
            encodeExecute({ portal: "", maxRows: 0 }),
            encodeSync(),
          ],
          [encodeQuery({ sql: "SELECT count(*) AS n FROM pg_prepared_statements" })],
          [encodeQuery({ sql: "DEALLOCATE _pg3_7" })],
          [encodeQuery({ sql: "SELECT count(*) AS n FROM pg_prepared_statements" })],
        ]) {
          wire.send(Buffer.concat(step));
          log.push(described(await wire.untilReady()).filter((line) => !line.startsWith("RowDescription")));
        }
      } finally {
        wire.close();
      }
      return log;
    };
    const direct = await listed(sessionPooled.direct.port);
    expect(direct[3]).toContain("DataRow 0");
    expect(await listed(sessionPooled.proxy.port)).toEqual(direct);
  });
});
