import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PgCluster, RawClient, startCluster } from "../src/index.js";

describe("SCRAM-SHA-256 login on a real PostgreSQL server through @geo/proto", () => {
  let cluster: PgCluster;

  beforeAll(async () => {
    cluster = await startCluster({
      hba: ["host all scram_user 127.0.0.1/32 scram-sha-256"],
      initSql:
        "SET password_encryption = 'scram-sha-256'; CREATE ROLE scram_user LOGIN PASSWORD 'correct horse';",
    });
  });

  afterAll(async () => {
    await cluster.stop();
  });

  it("logs in with the right password and verifies the server's signature", async () => {
    const server = cluster.servers[0]!;
    const client = await RawClient.connect({
      host: server.host,
      port: server.port,
      user: "scram_user",
      database: "postgres",
      password: "correct horse",
    });
    expect(client.authMethod).toBe("scram-sha-256");
    expect(client.serverVerified).toBe(true);
    const result = await client.query("SELECT current_user");
    expect(result.rows).toEqual([["scram_user"]]);
    await client.close();
  });

  it("is refused with 28P01 for a wrong password", async () => {
    const server = cluster.servers[0]!;
    await expect(
      RawClient.connect({
        host: server.host,
        port: server.port,
        user: "scram_user",
        database: "postgres",
        password: "wrong",
      }),
    ).rejects.toMatchObject({ code: "28P01" });
  });
});
