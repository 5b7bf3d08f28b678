import { type PgCluster, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster, type ReplicaEvent } from "../src/index.js";

let server: PgCluster;
let url: string;

beforeAll(async () => {
  server = await startCluster({ count: 1 });
  url = server.servers[0]?.url ?? "";
});
afterAll(async () => {
  await server?.stop();
});

/** The same server under two names: application_name tells which pool a query went through. */
function named(name: string, database = "postgres"): string {
  const endpoint = new URL(url);
  endpoint.pathname = `/${database}`;
  endpoint.searchParams.set("application_name", name);
  return endpoint.toString();
}

async function appName(sql: ReturnType<Cluster["read"]>): Promise<string> {
  const [row] = await sql<{ name: string }[]>`select current_setting('application_name') as name`;
  return row?.name ?? "";
}

describe("one real server standing in for both endpoints", () => {
  it("splits reads and writes over two pools and reads back a write through primary() and read()", async () => {
    await using cluster = await Cluster.connect({
      primary: named("geo-primary"),
      replica: named("geo-replica"),
    });
    expect(cluster.split).toBe(true);
    expect(await appName(cluster.write())).toBe("geo-primary");
    expect(await appName(cluster.read())).toBe("geo-replica");
    expect(await appName(cluster.primary())).toBe("geo-primary");

    await cluster.write()`create table notes (id int primary key, body text)`;
    await cluster.write().begin(async (tx) => {
      await tx`insert into notes values (1, 'hello')`;
      await tx`insert into notes values (2, 'world')`;
    });
    const mine = await cluster.primary()`select body from notes order by id`;
    expect(mine.map((row) => row.body)).toEqual(["hello", "world"]);
    const [count] = await cluster.read()<{ n: number }[]>`select count(*)::int as n from notes`;
    expect(count?.n).toBe(2);
  });

  it("runs single-pool when the replica URL names the same endpoint", async () => {
    await using cluster = await Cluster.connect({
      primary: url,
      replica: url.replace("postgres://", "postgresql://"),
    });
    expect(cluster.split).toBe(false);
    expect(cluster.read()).toBe(cluster.write());
    const [row] = await cluster.read()<{ one: number }[]>`select 1 as one`;
    expect(row?.one).toBe(1);
  });

  it("starts degraded on a replica that refuses, then a due probe brings it back", async () => {
    let now = 0;
    const events: ReplicaEvent[] = [];
    await using cluster = await Cluster.connect({
      primary: named("geo-primary"),
      // A database that does not exist yet: the server refuses the replica pool with 3D000.
      replica: named("geo-replica", "replica_later"),
      now: () => now,
      replicaRetryMinMs: 1_000,
      onReplicaEvent: (event) => events.push(event),
    });
    expect(events).toMatchObject([{ kind: "tripped", reason: "startup", error: { code: "3D000" } }]);
    expect(await appName(cluster.read())).toBe("geo-primary");

    await cluster.write()`create database replica_later`;
    now = 999;
    expect(await appName(cluster.read())).toBe("geo-primary");
    expect(cluster.replicaHealth().probes).toBe(0);

    now = 1_000;
    expect(await appName(cluster.read())).toBe("geo-primary");
    await cluster.settled();
    expect(cluster.replicaHealth().state).toBe("healthy");
    expect(await appName(cluster.read())).toBe("geo-replica");
    expect(events.at(-1)).toEqual({ kind: "restored", downForMs: 1_000 });
  });

  it("an error from a replica query, reported, sends reads to the primary", async () => {
    const cluster = await Cluster.connect({
      primary: named("geo-primary"),
      replica: named("geo-replica"),
      onReplicaEvent: () => {},
    });
    try {
      const sql = cluster.read();
      const failure = await sql`select pg_terminate_backend(pg_backend_pid())`.catch(
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: "CONNECTION_CLOSED" });
      expect(cluster.reportReplicaError(failure, sql)).toBe(true);
      expect(await appName(cluster.read())).toBe("geo-primary");
    } finally {
      // postgres.js' end() waits out its whole timeout once a backend terminated one of its connections.
      await cluster.close({ timeoutSeconds: 0.1 });
    }
  });
});
