import { encodeCancelRequest, encodeQuery, encodeStartupMessage } from "@geo/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeRegions, startFakeRegions } from "./support/fake-regions.js";
import { WireClient } from "./support/wire.js";

let regions: FakeRegions;

beforeAll(async () => {
  const plain = { unknownStatements: "empty" as const };
  regions = await startFakeRegions({
    "eu-west": plain,
    // us-east takes its time over COMMIT PREPARED: a cancel reaching it would end the wait with 57014.
    "us-east": {
      ...plain,
      rules: [
        { match: /^COMMIT PREPARED/, reply: { delayMs: 1500 } },
        { match: /pg_sleep/, reply: { delayMs: 3000 } },
      ],
    },
    // ap-south is slow to prepare: a cancel before the decision may stop it.
    "ap-south": { ...plain, rules: [{ match: /^PREPARE TRANSACTION/, reply: { delayMs: 3000 } }] },
  });
});
afterAll(() => regions.close());

async function login(): Promise<{ client: WireClient; key: { processId: number; secretKey: Buffer } }> {
  const client = await WireClient.connect(regions.proxy.port);
  client.send(encodeStartupMessage({ parameters: { user: "app" } }));
  const messages = await client.untilReady();
  const key = messages.find((m) => m.type === "BackendKeyData") as { processId: number; secretKey: Buffer };
  return { client, key };
}

async function run(client: WireClient, sql: string): Promise<string[]> {
  client.send(encodeQuery({ sql }));
  const answer = await client.untilReady();
  return answer.map((m) =>
    m.type === "ErrorResponse" ? `Error ${(m as { fields: { code: string } }).fields.code}` : m.type,
  );
}

describe("a client's cancel during a two-phase commit", () => {
  it("stops at the proxy once the decision is durable, so COMMIT PREPARED runs once and COMMIT succeeds", async () => {
    const { client, key } = await login();
    expect(await run(client, "BEGIN")).toEqual(["CommandComplete", "ReadyForQuery"]);
    await run(client, "UPDATE users SET name = 'a' WHERE tenant_id = 'alice'");
    await run(client, "UPDATE users SET name = 'b' WHERE tenant_id = 'bob'");
    client.send(encodeQuery({ sql: "COMMIT" }));
    await regions.fakes["us-east"].received(/^COMMIT PREPARED/, 5000);
    const canceller = await WireClient.connect(regions.proxy.port);
    canceller.send(encodeCancelRequest({ processId: key.processId, secretKey: key.secretKey }));
    const answer = await client.untilReady(10_000);
    expect(answer.map((m) => m.type)).toEqual(["CommandComplete", "ReadyForQuery"]);
    expect(answer[0]).toMatchObject({ tag: "COMMIT" });
    const sent = regions.fakes["us-east"].statements.map((statement) => statement.sql);
    expect(sent.filter((sql) => /^COMMIT PREPARED/.test(sql))).toHaveLength(1);
    expect(sent.some((sql) => /^PREPARE TRANSACTION 'geo_geoproxy_/.test(sql))).toBe(true);
    client.close();
    canceller.close();
  });

  it("reaches a slow PREPARE before the decision: the client gets 57014 and every region rolls back", async () => {
    const { client, key } = await login();
    await run(client, "BEGIN");
    await run(client, "UPDATE users SET name = 'a' WHERE tenant_id = 'alice' /* c3 */");
    await run(client, "UPDATE users SET name = 'c' WHERE tenant_id = 'chandra' /* c3 */");
    client.send(encodeQuery({ sql: "COMMIT" }));
    await regions.fakes["ap-south"].received(/^PREPARE TRANSACTION/, 5000);
    const canceller = await WireClient.connect(regions.proxy.port);
    canceller.send(encodeCancelRequest({ processId: key.processId, secretKey: key.secretKey }));
    const answer = await client.untilReady(10_000);
    expect(answer.find((m) => m.type === "ErrorResponse")).toMatchObject({ fields: { code: "57014" } });
    expect(answer.at(-1)).toEqual({ type: "ReadyForQuery", status: "I" });
    const eu = regions.fakes["eu-west"].statements.map((statement) => statement.sql);
    const gid = /^PREPARE TRANSACTION '([^']+)'/.exec(
      eu.filter((sql) => sql.startsWith("PREPARE")).at(-1) ?? "",
    )?.[1];
    expect(gid).toBeDefined();
    expect(eu).toContain(`ROLLBACK PREPARED '${gid}'`);
    expect(eu).not.toContain(`COMMIT PREPARED '${gid}'`);
    client.close();
    canceller.close();
  });

  it("still reaches the regions before COMMIT: a cancelled statement fails with 57014", async () => {
    const { client, key } = await login();
    await run(client, "BEGIN");
    client.send(encodeQuery({ sql: "SELECT pg_sleep(5) FROM users WHERE tenant_id = 'bob'" }));
    await regions.fakes["us-east"].received(/pg_sleep/, 5000);
    const canceller = await WireClient.connect(regions.proxy.port);
    canceller.send(encodeCancelRequest({ processId: key.processId, secretKey: key.secretKey }));
    const answer = await client.untilReady(10_000);
    expect(answer.find((m) => m.type === "ErrorResponse")).toMatchObject({ fields: { code: "57014" } });
    expect(await run(client, "ROLLBACK")).toEqual(["CommandComplete", "ReadyForQuery"]);
    client.close();
    canceller.close();
  });
});
