import { type PgCluster, type PgReplica, type PgServer, startCluster, startReplica } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BackendConnection,
  type BackendEndpoint,
  HealthAlertKind,
  type HealthEvent,
  HealthMonitor,
  ReplicaRefusal,
} from "../src/index.js";

let cluster: PgCluster;
let primary: PgServer;
let replica: PgReplica;
let onPrimary: BackendConnection;
let onReplica: BackendConnection;
let monitor: HealthMonitor;
const events: HealthEvent[] = [];

const lagBound = 8192n;

function endpointOf(server: PgServer, region: string, role: "primary" | "replica"): BackendEndpoint {
  return { region, role, host: server.host, port: server.port, database: server.database, user: server.user };
}

function connect(server: PgServer): Promise<BackendConnection> {
  return BackendConnection.connect({
    host: server.host,
    port: server.port,
    database: server.database,
    user: server.user,
    connectTimeoutMs: 5_000,
  });
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function scalar(connection: BackendConnection, sql: string): Promise<string | null | undefined> {
  return (await connection.simpleQuery(sql)).rows[0]?.[0];
}

beforeAll(async () => {
  // Read-your-writes leans on the commit record being written before COMMIT returns, which
  // synchronous_commit = off (the launcher's default, for speed) does not promise.
  cluster = await startCluster({
    settings: { synchronous_commit: "on" },
    initSql: "CREATE TABLE written (id int);",
  });
  primary = cluster.servers[0]!;
  replica = await startReplica(cluster);
  onPrimary = await connect(primary);
  onReplica = await connect(replica);
  monitor = new HealthMonitor({
    endpoints: [endpointOf(primary, "eu", "primary"), endpointOf(replica, "eu", "replica")],
    // Rounds are driven by probeNow(): the timer never fires during a test.
    intervalMs: 600_000,
    probeTimeoutMs: 2_000,
    maxReplicaLagBytes: lagBound,
  });
  monitor.subscribe((event) => events.push(event));
});

afterAll(async () => {
  await monitor?.stop();
  onPrimary?.destroy();
  onReplica?.destroy();
  await replica?.stop();
  await cluster?.stop();
});

describe("HealthMonitor against a primary with a streaming replica", () => {
  it("probes each backend on a connection of its own named geoproxy health and tells the replica by its recovery", async () => {
    await monitor.start();
    expect(monitor.status(primary)).toMatchObject({ state: "up", inRecovery: false, roleMismatch: false });
    expect(monitor.status(replica)).toMatchObject({ state: "up", inRecovery: true, roleMismatch: false });
    expect(monitor.status(primary)?.lsn).toBeGreaterThan(0n);
    const probes = await scalar(
      onPrimary,
      "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'geoproxy health'",
    );
    expect(probes).toBe("1");
    await monitor.probeNow();
    expect(
      await scalar(
        onReplica,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'geoproxy health'",
      ),
    ).toBe("1");
  });

  it("measures lag while replay is paused, keeps reads and the writer's reads off the replica, and uses it again after catch-up", async () => {
    await eventually(async () => {
      await monitor.probeNow();
      return monitor.pickReplica("eu", { maxLagBytes: lagBound }) !== undefined;
    });

    await onReplica.simpleQuery("SELECT pg_wal_replay_pause()");
    await eventually(
      async () => (await scalar(onReplica, "SELECT pg_get_wal_replay_pause_state()")) === "paused",
    );
    await onPrimary.simpleQuery("INSERT INTO written SELECT generate_series(1, 2000)");
    const fence = monitor.writeFence("eu");
    const written = await scalar(onPrimary, "SELECT pg_current_wal_lsn()");
    await eventually(
      async () =>
        (await scalar(onReplica, `SELECT pg_last_wal_receive_lsn() >= '${written}'::pg_lsn`)) === "t",
    );

    await monitor.probeNow();
    const lagging = monitor.status(replica)!;
    expect(lagging.lagBytes).toBeGreaterThan(lagBound);
    expect(monitor.pickReplica("eu", { maxLagBytes: lagBound })).toBeUndefined();
    expect(monitor.alerts()).toContainEqual(
      expect.objectContaining({ kind: HealthAlertKind.replicaLagging, address: lagging.address }),
    );
    expect(fence.lsn).toBeGreaterThan(lagging.lsn!);
    expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n })?.address).toBe(lagging.address);
    expect(monitor.explainReplicaChoice("eu", { maxLagBytes: 1n << 40n, fence }).replicas).toEqual([
      { address: lagging.address, refusal: ReplicaRefusal.behindWrite },
    ]);

    await onReplica.simpleQuery("SELECT pg_wal_replay_resume()");
    await eventually(async () => {
      await monitor.probeNow();
      return monitor.pickReplica("eu", { maxLagBytes: lagBound, fence }) !== undefined;
    });
    // What the fence promised: the replica it lets through has the write.
    expect(await scalar(onReplica, "SELECT count(*) FROM written")).toBe("2000");
    expect(monitor.alerts().filter((alert) => alert.kind === HealthAlertKind.replicaLagging)).toEqual([]);
  });

  it("flags a server that the topology calls a primary but that is in recovery", async () => {
    const misnamed = new HealthMonitor({
      endpoints: [endpointOf(replica, "ap", "primary")],
      intervalMs: 600_000,
      probeTimeoutMs: 2_000,
    });
    try {
      await misnamed.probeNow();
      expect(misnamed.status(replica)).toMatchObject({ inRecovery: true, roleMismatch: true, up: true });
      expect(misnamed.alerts()).toEqual([
        expect.objectContaining({ kind: HealthAlertKind.roleMismatch, region: "ap", role: "primary" }),
      ]);
    } finally {
      await misnamed.stop();
    }
  });

  it("marks a stopped replica down at the third failed probe, and up again once it is back", async () => {
    const address = `${replica.host}:${replica.port}`;
    await replica.stopServer("immediate");
    await monitor.probeNow();
    await monitor.probeNow();
    expect(monitor.status(address)).toMatchObject({ state: "up", consecutiveFailures: 2 });
    await monitor.probeNow();
    expect(monitor.status(address)).toMatchObject({ state: "down", consecutiveFailures: 3 });
    expect(monitor.status(address)?.lastError).toMatch(/could not connect|lost connection|terminating/);
    expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n })).toBeUndefined();
    expect(monitor.alerts()).toContainEqual(
      expect.objectContaining({ kind: HealthAlertKind.backendDown, address }),
    );
    expect(monitor.status(primary)?.state).toBe("up");

    await replica.startServer();
    await monitor.probeNow();
    expect(monitor.status(address)).toMatchObject({ state: "up", consecutiveFailures: 0, inRecovery: true });
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "state",
        previous: "down",
        backend: expect.objectContaining({ address }),
      }),
    );
  });
});
