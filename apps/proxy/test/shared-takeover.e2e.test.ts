import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PgCluster, startCluster } from "@geo/testkit";
import { GidFactory } from "@geo/txn";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { prefixFor } from "../src/distributed/txn-service.js";
import { REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";
import { connectDirect, MOVE_SCHEMA } from "./support/move-regions.js";
import { ProxyChild } from "./support/proxy-child.js";

// A proxy of a shared directory that stops heartbeating leaves prepared transactions behind; a
// peer finishes them once the silent one's node claim is free in every region, and never while
// the silent one (even frozen) still holds it.
let cluster: PgCluster;
let direct: Record<RegionName, pg.Client>;
let folder: string;
const running: ProxyChild[] = [];

const STORE = `shared = true\nauthority = "eu-west"\npoll_ms = 100\nlease_ms = 600\n`;
const TXN = `decision_log = "table"\nrecovery_interval_ms = 300\n`;
const AUTH = `[auth]
method = "scram-sha-256"
lookup = false
users = [{ name = "ops", password = "ops-secret" }]
operators = ["ops"]
`;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  folder = await mkdtemp(join(tmpdir(), "geo-shared-takeover-"));
});

afterEach(async () => {
  for (const child of running) {
    try {
      if (child.pid !== undefined) process.kill(child.pid, "SIGCONT");
    } catch {
      // Exited already.
    }
  }
  await Promise.all(running.splice(0).map((child) => child.stop()));
});

afterAll(async () => {
  for (const client of Object.values(direct ?? {})) await client.end().catch(() => undefined);
  await cluster?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

async function launch(node: string, home: RegionName, data?: string): Promise<ProxyChild> {
  const dir = data ?? (await mkdtemp(join(folder, `${node}-`)));
  const toml = regionsToml(
    cluster.servers.map((s) => s.port),
    `\n${AUTH}\n[txn]\ndata_dir = "${dir}"\n${TXN}\n[directory_store]\n${STORE}\n`,
  )
    .replace("[server]\n", `[server]\nnode = "${node}"\n`)
    .replace("home = true\n", "")
    .replace(`id = "${home}"\n`, `id = "${home}"\nhome = true\n`);
  const configPath = join(dir, "geoproxy.toml");
  await writeFile(configPath, toml);
  const child = new ProxyChild(["--config", configPath, "--log-level", "info"]);
  running.push(child);
  return child;
}

async function connect(port: number): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: "ops",
    password: "ops-secret",
    database: "postgres",
  });
  client.on("error", () => undefined);
  await client.connect();
  return client;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function prepared(): Promise<string[]> {
  const gids: string[] = [];
  for (const region of REGIONS)
    for (const row of (await direct[region].query("SELECT gid FROM pg_prepared_xacts")).rows)
      gids.push(row.gid);
  return gids;
}

/** A transaction of `node`'s prefix prepared in `regions`, inserting a user named after it. */
async function prepareAs(node: string, name: string, regions: RegionName[]): Promise<string> {
  const gid = new GidFactory(prefixFor(node)).next();
  for (const region of regions) {
    await direct[region].query(
      `BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('${name}-${region}', 1, '${name}'); PREPARE TRANSACTION '${gid}'`,
    );
  }
  return gid;
}

async function usersNamed(name: string): Promise<number> {
  let count = 0;
  for (const region of REGIONS)
    count += (await direct[region].query("SELECT count(*)::int AS n FROM users WHERE name = $1", [name]))
      .rows[0].n;
  return count;
}

describe("a silent peer's prepared transactions", () => {
  it("are left alone while it is frozen, finished by a peer once it is dead, and it starts again after", async () => {
    const victimData = await mkdtemp(join(folder, "victim-"));
    const victim = await launch("victim", "us-east", victimData);
    const rescuer = await launch("rescuer", "eu-west");
    const [, rescuerPort] = await Promise.all([victim.listening(), rescuer.listening()]);
    const client = await connect(rescuerPort);
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('held-key', 1, 'x')");
    await until(
      async () =>
        (await direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_peers")).rows[0]
          .n === 2,
      5000,
    );

    // Frozen, it still holds its node claim: nothing of its may be touched, however silent it is.
    process.kill(victim.pid!, "SIGSTOP");
    const decided = await prepareAs("victim", "decided", ["us-east", "ap-south"]);
    // A move it announced and never withdrew: the rescuer holds the key as long as it stands.
    await direct["eu-west"].query(
      "WITH m AS (INSERT INTO geoproxy_directory_moves (mover, keys, target) VALUES ('victim', ARRAY['held-key'], 'ap-south') RETURNING id) INSERT INTO geoproxy_directory_moving (key, move_id) SELECT 'held-key', id FROM m",
    );
    const undecided = await prepareAs("victim", "undecided", ["us-east", "eu-west"]);
    // Its decision, in the table log of its home region (us-east), as its coordinator writes it.
    await direct["us-east"].query(
      "INSERT INTO geo_txn_decisions (gid, decision, participants, decided_at) VALUES ($1, 'commit', ARRAY['us-east', 'ap-south'], now())",
      [decided],
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await prepared()).sort()).toEqual([decided, decided, undecided, undecided].sort());
    expect(
      (await direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moves")).rows[0].n,
    ).toBe(1);

    // Dead: its claim's sessions end with it, and the rescuer finishes what it left.
    await victim.kill();
    await until(async () => (await prepared()).length === 0, 10_000);
    expect(await usersNamed("decided")).toBe(2);
    expect(await usersNamed("undecided")).toBe(0);
    expect(rescuer.stdout).toContain("finished what a silent proxy left prepared");
    // Its announcement is withdrawn under its claim: the key is served again without its restart.
    await until(
      async () =>
        (await direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moves")).rows[0]
          .n === 0,
      5000,
    );
    const started = Date.now();
    expect((await client.query("SELECT name FROM users WHERE tenant_id = 'held-key'")).rows).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(3000);
    await client.end();

    // The rescuer let the claim go: the victim starts again under its own name.
    running.splice(running.indexOf(victim), 1);
    const again = await launch("victim", "us-east", victimData);
    await again.listening();
  });

  it.each([250, 500, 800])(
    "settles a move whose mover is SIGKILLed %i ms into a run of RELOCATEs: one region, every increment in the sum",
    async (killAfterMs) => {
      const mover = await launch("mover", "eu-west");
      const writer = await launch("writer", "us-east");
      const [portA, portB] = await Promise.all([mover.listening(), writer.listening()]);
      const [ops, app] = [await connect(portA), await connect(portB)];
      const key = `spun-${killAfterMs}`;
      await app.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, '0')", [key]);
      let stop = false;
      let killed = false;
      let committed = 0;
      let lost = 0;
      const refused = new Map<string, number>();
      const writes = (async () => {
        while (!stop) {
          try {
            const result = await app.query(
              "UPDATE users SET name = (name::int + 1)::text WHERE tenant_id = $1 AND id = 1",
              [key],
            );
            if (result.rowCount === 1) committed++;
            else lost++;
          } catch (error) {
            const code = (error as { code?: string }).code ?? "?";
            refused.set(code, (refused.get(code) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      })();
      const moves = (async () => {
        for (let i = 0; !killed; i++) {
          await ops.query(`RELOCATE ${key} TO '${REGIONS[i % 3]!}'`).catch(() => undefined);
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      killed = true;
      await mover.kill();
      await moves;
      const left = (await prepared()).length;
      const announced = (
        await direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moves")
      ).rows[0].n;
      console.log(
        `mover killed after ${killAfterMs} ms: ${left} prepared, ${announced} announced at the kill`,
      );
      // The writer's proxy takes the mover's claim, settles its move and withdraws it: writes go on.
      await until(async () => (await prepared()).length === 0, 15_000);
      const before = committed;
      await until(async () => committed > before + 5, 15_000);
      stop = true;
      await writes;
      const where: RegionName[] = [];
      for (const region of REGIONS) {
        const { rows } = await direct[region].query("SELECT 1 FROM users WHERE tenant_id = $1", [key]);
        if (rows.length > 0) where.push(region);
      }
      expect(where).toHaveLength(1);
      const { rows } = await direct[where[0]!].query("SELECT name FROM users WHERE tenant_id = $1", [key]);
      expect(lost).toBe(0);
      expect(Number(rows[0].name)).toBe(committed);
      // Every region's directory, the authority's included, names the region holding the rows.
      for (const region of REGIONS) {
        const entry = await direct[region].query("SELECT region FROM geoproxy_directory WHERE key = $1", [
          key,
        ]);
        expect(
          entry.rows.map((row) => row.region),
          region,
        ).toEqual([where[0]]);
      }
      expect([...refused.keys()].filter((code) => code !== "40001" && code !== "57P03")).toEqual([]);
      await app.end();
    },
  );
});
