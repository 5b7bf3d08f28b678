import { type PgCluster, startCluster } from "@geo/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClientError, Cluster, migrate } from "../src/index.js";

let servers: PgCluster;
let cluster: Cluster;
let onPrimary: postgres.Sql;
let onReplica: postgres.Sql;

beforeAll(async () => {
  // Two independent servers, so where a statement landed is visible by asking each one.
  servers = await startCluster({ count: 2 });
  const [first, second] = servers.servers;
  if (first === undefined || second === undefined)
    throw new Error("startCluster returned fewer than two servers");
  cluster = await Cluster.connect({ primary: first.url, replica: second.url, onReplicaEvent: () => {} });
  onPrimary = postgres(first.url, { max: 1, onnotice: () => {} });
  onReplica = postgres(second.url, { max: 1, onnotice: () => {} });
});

afterAll(async () => {
  await cluster?.close();
  await onPrimary?.end();
  await onReplica?.end();
  await servers?.stop();
});

async function tableExists(sql: postgres.Sql, name: string): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`select to_regclass(${name}) is not null as found`;
  return row?.found ?? false;
}

describe("migrate against two real servers", () => {
  it("reaches the primary while read() hands out the replica", async () => {
    const [first, second] = servers.servers;
    const [readPort] = await cluster.read()<{ port: number }[]>`select inet_server_port() as port`;
    expect(readPort?.port).toBe(second?.port);
    expect(cluster.replicaHealth().state).toBe("healthy");

    const result = await cluster.migrate([
      { id: "001_orders", up: "create table orders (id bigint primary key, total numeric not null)" },
      { id: "002_orders_customer", up: "alter table orders add column customer text" },
    ]);

    expect(result).toEqual({ applied: ["001_orders", "002_orders_customer"], skipped: [] });
    expect(await tableExists(onPrimary, "public.orders")).toBe(true);
    expect(await tableExists(onReplica, "public.orders")).toBe(false);
    expect(await tableExists(onReplica, "public.geo_client_migrations")).toBe(false);
    const [writePort] = await cluster.write()<{ port: number }[]>`select inet_server_port() as port`;
    expect(writePort?.port).toBe(first?.port);
  });

  it("a second run applies nothing and reports what was there", async () => {
    const result = await migrate(cluster, [
      { id: "001_orders", up: "create table orders (id bigint primary key)" },
      { id: "002_orders_customer", up: "alter table orders add column customer text" },
      {
        id: "003_seed",
        up: async (tx) => {
          await tx`insert into orders (id, total, customer) values (1, 9.5, 'ada')`;
        },
      },
    ]);
    expect(result).toEqual({ applied: ["003_seed"], skipped: ["001_orders", "002_orders_customer"] });
    const rows = await cluster.primary()`select customer from orders`;
    expect(rows.map((row) => row.customer)).toEqual(["ada"]);
  });

  it("a failing migration rolls back whole, carries the server's SQLSTATE, and keeps earlier ones", async () => {
    const failure = await migrate(cluster, [
      { id: "010_ok", up: "create table audit (id bigint)" },
      { id: "011_broken", up: "create table half_done (id bigint); select * from no_such_table" },
    ]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ClientError);
    expect(failure).toMatchObject({ code: "migration_failed", sqlState: "42P01" });
    expect(await tableExists(onPrimary, "public.audit")).toBe(true);
    expect(await tableExists(onPrimary, "public.half_done")).toBe(false);
    const ids = await onPrimary`select id from geo_client_migrations where id like '01%' order by id`;
    expect(ids.map((row) => row.id)).toEqual(["010_ok"]);
  });

  it("refuses to run a migration listed before one that already ran", async () => {
    const failure = await migrate(cluster, [
      { id: "001_orders", up: "select 1" },
      { id: "001b_inserted_later", up: "create table never (id int)" },
      { id: "002_orders_customer", up: "select 1" },
    ]).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "migration_gap" });
    expect((failure as Error).message).toContain("001b_inserted_later");
    expect(await tableExists(onPrimary, "public.never")).toBe(false);
  });

  it("leaves alone ids recorded by a newer release", async () => {
    const result = await migrate(cluster, [{ id: "001_orders", up: "select 1" }]);
    expect(result).toEqual({ applied: [], skipped: ["001_orders"] });
  });

  it("concurrent runners apply each migration exactly once", async () => {
    const list = [1, 2, 3, 4].map((n) => ({
      id: `c${n}`,
      up: `insert into counts (n) values (${n})`,
    }));
    await onPrimary`create table counts (n int)`;
    const options = { table: "public.concurrent_migrations" };
    const [a, b] = await Promise.all([migrate(cluster, list, options), migrate(cluster, list, options)]);
    expect([...(a?.applied ?? []), ...(b?.applied ?? [])].sort()).toEqual(["c1", "c2", "c3", "c4"]);
    const rows = await onPrimary`select n from counts order by n`;
    expect(rows.map((row) => row.n)).toEqual([1, 2, 3, 4]);
  });

  const invalid = [
    {
      name: "a duplicate id",
      list: [
        { id: "x", up: "" },
        { id: "x", up: "" },
      ],
      table: undefined,
    },
    { name: "an empty id", list: [{ id: " ", up: "" }], table: undefined },
    { name: "a tracking table that is not a plain name", list: [], table: "t; drop table orders" },
  ];
  for (const row of invalid) {
    it(`refuses ${row.name} before touching the server`, async () => {
      const failure = await migrate(
        cluster,
        row.list,
        row.table === undefined ? {} : { table: row.table },
      ).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "migration_invalid" });
    });
  }
});
