import {
  type BackendMessage,
  encodeBind,
  encodeExecute,
  encodeParse,
  encodeStartupMessage,
  encodeSync,
} from "@geo/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { WireClient } from "./support/wire.js";

// A key bound in binary with no type in the Parse (parameter type 0): its bytes say nothing
// until the type is known. PostgreSQL computes the type at Parse; the proxy asks a server for
// it (ParameterDescription) and routes by the decoded key, instead of refusing the statement.
let regions: RealRegions;

beforeAll(async () => {
  regions = await startRealRegions();
});
afterAll(() => regions?.close());

async function loggedIn(): Promise<WireClient> {
  const wire = await WireClient.connect(regions.proxy.port);
  wire.send(encodeStartupMessage({ parameters: { user: "postgres", database: "shop" } }));
  await wire.untilReady();
  return wire;
}

function bound(sql: string, key: Buffer, statement = ""): Buffer[] {
  return [
    encodeParse({ name: statement, sql, paramTypes: [] }),
    encodeBind({ portal: "", statement, paramFormats: [1], params: [key], resultFormats: [] }),
    encodeExecute({ portal: "", maxRows: 0 }),
    encodeSync(),
  ];
}

function names(messages: readonly BackendMessage[]): string[] {
  return messages.map((m) =>
    m.type === "DataRow" ? m.values.map((v) => v?.toString() ?? "null").join(",") : m.type,
  );
}

describe("a key bound in binary with an undeclared type", () => {
  it("is read with the type the server gives it, and the statement goes to the key's region", async () => {
    const [key] = regions.entries.find(([, r]) => r !== "eu-west")!;
    const wire = await loggedIn();
    try {
      // text's binary form is its UTF-8 bytes; the home region (eu-west) does not hold this key.
      wire.send(
        Buffer.concat(bound("SELECT name FROM users WHERE tenant_id = $1 AND id = 1", Buffer.from(key))),
      );
      expect(names(await wire.untilReady())).toEqual([
        "ParseComplete",
        "BindComplete",
        `${key}-1`,
        "CommandComplete",
        "ReadyForQuery",
      ]);
    } finally {
      wire.close();
    }
  });

  it("works the same for a named statement inside a block, asking the block's connection", async () => {
    const [key] = regions.entries.find(([, r]) => r === "ap-south")!;
    const wire = await loggedIn();
    try {
      wire.send(
        Buffer.concat([
          encodeParse({ name: "", sql: "BEGIN", paramTypes: [] }),
          encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
          encodeExecute({ portal: "", maxRows: 0 }),
          encodeSync(),
        ]),
      );
      await wire.untilReady();
      wire.send(
        Buffer.concat(bound("SELECT count(*) FROM orders WHERE tenant_id = $1", Buffer.from(key), "per_key")),
      );
      expect(names(await wire.untilReady())).toEqual([
        "ParseComplete",
        "BindComplete",
        "5",
        "CommandComplete",
        "ReadyForQuery",
      ]);
    } finally {
      wire.close();
    }
  });
});

describe("a fastpath function call with several regions and transaction pooling", () => {
  it("is refused with 0A000 and the session goes on, since its function and state would be one server's", async () => {
    const wire = await loggedIn();
    try {
      // FunctionCall: function oid 1, no argument formats, no arguments, text result.
      const call = Buffer.alloc(15);
      call[0] = 0x46;
      call.writeInt32BE(14, 1);
      call.writeInt32BE(1, 5);
      wire.send(call);
      const answer = await wire.untilReady();
      expect(names(answer)).toEqual(["ErrorResponse", "ReadyForQuery"]);
      expect((answer[0] as { fields: Record<string, string> }).fields.code).toBe("0A000");
    } finally {
      wire.close();
    }
  });
});
