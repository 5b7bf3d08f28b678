import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { GidFactory } from "@geo/txn";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { prefixFor } from "../src/distributed/txn-service.js";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import type { ProxyChild } from "./support/proxy-child.js";
import { incrementUntilStopped, SharedProxies, until } from "./support/shared-proxies.js";

// A proxy of a shared directory that stops heartbeating leaves prepared transactions behind; a
// peer finishes them once the silent one's node claim is free in every region, and never while
// the silent one (even frozen) still holds it.
const proxies = new SharedProxies("geo-shared-takeover-");

const STORE = `shared = true\nauthority = "eu-west"\npoll_ms = 100\nlease_ms = 600\n`;
/** Each case runs with one authority region, then with a majority of the regions. */
const STORES = [
  ["one authority region", STORE],
  ["a majority of the regions", STORE.replace('"eu-west"', '"majority"')],
] as const;
let store: string = STORE;
const TXN = `decision_log = "table"\nrecovery_interval_ms = 300\n`;

beforeAll(() => proxies.start());
afterEach(() => proxies.stopProxies());
afterAll(() => proxies.close());

function launch(node: string, home: RegionName, data?: string, txn = TXN): Promise<ProxyChild> {
  return proxies.launch(node, home, { store, txn, ...(data === undefined ? {} : { data }) });
}

const connect = (port: number): Promise<pg.Client> => proxies.connect(port);

async function prepared(): Promise<string[]> {
  const gids: string[] = [];
  for (const region of REGIONS)
    for (const row of (await proxies.direct[region].query("SELECT gid FROM pg_prepared_xacts")).rows)
      gids.push(row.gid);
  return gids;
}

/** A transaction of `node`'s prefix prepared in `regions`, inserting a user named after it. */
async function prepareAs(node: string, name: string, regions: RegionName[]): Promise<string> {
  const gid = new GidFactory(prefixFor(node)).next();
  for (const region of regions) {
    await proxies.direct[region].query(
      `BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('${name}-${region}', 1, '${name}'); PREPARE TRANSACTION '${gid}'`,
    );
  }
  return gid;
}

async function usersNamed(name: string): Promise<number> {
  let count = 0;
  for (const region of REGIONS)
    count += (
      await proxies.direct[region].query("SELECT count(*)::int AS n FROM users WHERE name = $1", [name])
    ).rows[0].n;
  return count;
}

describe.each(STORES)("a silent peer's prepared transactions, agreeing in %s", (_where, agreeing) => {
  beforeAll(async () => {
    store = agreeing;
    await proxies.reset();
  });

  it("are left alone while it is frozen, finished by a peer once it is dead, and it starts again after", async () => {
    const victimData = await mkdtemp(join(proxies.folder, "victim-"));
    const victim = await launch("victim", "us-east", victimData);
    const rescuer = await launch("rescuer", "eu-west");
    const [, rescuerPort] = await Promise.all([victim.listening(), rescuer.listening()]);
    const client = await connect(rescuerPort);
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('held-key', 1, 'x')");
    await until(
      async () =>
        (await proxies.direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_peers"))
          .rows[0].n === 2,
      5000,
    );

    // Frozen, it still holds its node claim: nothing of its may be touched, however silent it is.
    process.kill(victim.pid!, "SIGSTOP");
    const decided = await prepareAs("victim", "decided", ["us-east", "ap-south"]);
    // A move it announced and never withdrew: the rescuer holds the key as long as it stands.
    await proxies.direct["eu-west"].query(
      "WITH m AS (INSERT INTO geoproxy_directory_moves (mover, keys, target) VALUES ('victim', ARRAY['held-key'], 'ap-south') RETURNING id) INSERT INTO geoproxy_directory_moving (key, move_id) SELECT 'held-key', id FROM m",
    );
    const undecided = await prepareAs("victim", "undecided", ["us-east", "eu-west"]);
    // Its decision, in the table log of its home region (us-east), as its coordinator writes it.
    await proxies.direct["us-east"].query(
      "INSERT INTO geo_txn_decisions (gid, decision, participants, decided_at) VALUES ($1, 'commit', ARRAY['us-east', 'ap-south'], now())",
      [decided],
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await prepared()).sort()).toEqual([decided, decided, undecided, undecided].sort());
    expect(
      (await proxies.direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moves"))
        .rows[0].n,
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
        (await proxies.direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moves"))
          .rows[0].n === 0,
      5000,
    );
    const started = Date.now();
    expect((await client.query("SELECT name FROM users WHERE tenant_id = 'held-key'")).rows).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(3000);

    // The rescuer let the claim go: the victim starts again under its own name.
    proxies.forget(victim);
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
      let killed = false;
      const increments = incrementUntilStopped(app, key);
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
        await proxies.direct["eu-west"].query("SELECT count(*)::int AS n FROM geoproxy_directory_moves")
      ).rows[0].n;
      console.log(
        `mover killed after ${killAfterMs} ms: ${left} prepared, ${announced} announced at the kill`,
      );
      // The writer's proxy takes the mover's claim, settles its move and withdraws it: writes go on.
      await until(async () => (await prepared()).length === 0, 15_000);
      const before = increments.counts.committed;
      await until(async () => increments.counts.committed > before + 5, 15_000);
      const { committed, lost, refused } = await increments.stop();
      const where = await proxies.regionsWith(key);
      expect(where).toHaveLength(1);
      const { rows } = await proxies.direct[where[0]!].query("SELECT name FROM users WHERE tenant_id = $1", [
        key,
      ]);
      expect(lost).toBe(0);
      expect(Number(rows[0].name)).toBe(committed);
      // Every region's entry names the region holding the rows; the authority has one (a region
      // no move reached yet lists none: the key's first write recorded it in its own region only).
      for (const region of REGIONS) {
        const entry = await proxies.direct[region].query(
          "SELECT region FROM geoproxy_directory WHERE key = $1",
          [key],
        );
        const regions = entry.rows.map((row) => row.region);
        expect(
          regions.filter((named) => named !== where[0]),
          region,
        ).toEqual([]);
        if (region === "eu-west") expect(regions, region).toEqual([where[0]]);
      }
      expect(refused.filter((code) => code !== "40001" && code !== "57P03")).toEqual([]);
    },
  );

  it("leaves a dead peer's statements alone when its decision log is a file, and still settles its moves", async () => {
    const victim = await launch("filed", "us-east", undefined, "recovery_interval_ms = 300\n");
    const rescuer = await launch("reader", "eu-west");
    await Promise.all([victim.listening(), rescuer.listening()]);
    await until(
      async () =>
        (
          await proxies.direct["eu-west"].query(
            "SELECT decision_log FROM geoproxy_directory_peers WHERE node = 'filed'",
          )
        ).rows[0]?.decision_log === "file",
      5000,
    );
    await victim.kill();
    // Its log is a file on its own disk: a peer cannot know what it decided.
    const statement = await prepareAs("filed", "filed-statement", ["us-east", "ap-south"]);
    const move = new GidFactory(`${prefixFor("filed").slice(0, 96)}_mv`).next();
    await proxies.direct["eu-west"].query(
      `BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('filed-move', 1, 'filed-move'); PREPARE TRANSACTION '${move}'`,
    );
    await until(async () => !(await prepared()).includes(move), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await prepared()).filter((gid) => gid === statement)).toHaveLength(2);
    expect(await usersNamed("filed-move")).toBe(0);
    for (const region of ["us-east", "ap-south"] as const)
      await proxies.direct[region].query(`ROLLBACK PREPARED '${statement}'`);
  });
});
