import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type PgServer, startCluster } from "@geo/testkit";
import pg from "pg";
import { atCleanup, type Child, startChild } from "./cleanup.js";
import { type DelayRelay, startDelayRelay } from "./delay-relay.js";

export const HOME = "eu-west";

/** The testbed's regions and their round trip from the home region, where the clients are. */
export interface RegionSetting {
  readonly id: string;
  readonly rttMs: number;
}

export interface GeoSettings {
  readonly regions: readonly RegionSetting[];
  /** Round trip from the clients to the single PostgreSQL of the baseline. */
  readonly baselineRttMs: number;
  /** Region the baseline's single PostgreSQL stands in (a label for the report). */
  readonly baselineRegion: string;
  readonly keysPerRegion: number;
  readonly geoproxyCli: string;
}

export const DEFAULT_CLI = fileURLToPath(new URL("../../../apps/proxy/dist/cli.js", import.meta.url));

/** Keys of each region: `<region>-<n>`, with ten accounts each. */
export function regionKey(region: string, n: number): string {
  return `${region}-${n}`;
}

export const SCHEMA_SQL = `CREATE TABLE accounts (
  tenant_id text    NOT NULL,
  id        integer NOT NULL,
  balance   bigint  NOT NULL,
  note      text,
  PRIMARY KEY (tenant_id, id)
);`;

const ACCOUNTS_PER_KEY = 10;

function accountsSql(regions: readonly string[], keysPerRegion: number): string {
  const rows: string[] = [];
  for (const region of regions) {
    for (let n = 0; n < keysPerRegion; n++) {
      for (let id = 1; id <= ACCOUNTS_PER_KEY; id++)
        rows.push(`('${regionKey(region, n)}', ${id}, ${id * 100}, NULL)`);
    }
  }
  return rows.length === 0 ? "" : `INSERT INTO accounts VALUES ${rows.join(", ")};`;
}

export interface Target {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

/** Everything the run started: region servers, relays, geoproxy, and the baseline. */
export interface GeoWorld {
  readonly proxy: Target;
  readonly baseline: Target;
  readonly relays: readonly { readonly label: string; readonly relay: DelayRelay }[];
  readonly geoproxy: Child;
  readonly workDir: string;
}

async function runSql(server: PgServer, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilListening(child: Child, port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.hasExited()) throw new Error(`geoproxy exited before listening:\n${child.logTail()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`geoproxy did not listen on ${port} within ${timeoutMs} ms:\n${child.logTail()}`);
}

/** geoproxy's configuration: the home region direct, every other one through its relay. */
export function geoConfigToml(
  port: number,
  primaries: readonly { id: string; host: string; port: number }[],
): string {
  const regions = primaries
    .map(
      (region) => `[[topology.regions]]
id = "${region.id}"
home = ${region.id === HOME}
primary = { host = "${region.host}", port = ${region.port}, database = "postgres", user = "postgres" }
`,
    )
    .join("\n");
  return `[server]
host = "127.0.0.1"
port = ${port}
node = "geoproxy-${HOME}"

${regions}
[[tables]]
table = "accounts"
placement = "geo_partitioned"
key = "tenant_id"

[pool]
max = 8
`;
}

/**
 * Starts one PostgreSQL per region plus the baseline's single PostgreSQL (every row), a delaying
 * relay in front of each remote endpoint, and geoproxy (a child process) in the home region.
 * Everything is registered for cleanup as it starts.
 */
export async function startGeoWorld(settings: GeoSettings): Promise<GeoWorld> {
  if (!existsSync(settings.geoproxyCli)) {
    throw new Error(
      `${settings.geoproxyCli} does not exist: build geoproxy first (pnpm --filter @geo/proxy run build)`,
    );
  }
  const workDir = mkdtempSync(join(tmpdir(), "geo-testbed-"));
  atCleanup(
    () => rmSync(workDir, { recursive: true, force: true }),
    () => rmSync(workDir, { recursive: true, force: true }),
  );
  const regionIds = settings.regions.map((region) => region.id);
  const cluster = await startCluster({ count: regionIds.length + 1, initSql: SCHEMA_SQL });
  atCleanup(async () => {
    try {
      await cluster.stop();
    } catch (error) {
      // On a signal the launcher's own hook removes the servers first; only what it left is a failure.
      if (cluster.servers.some((server) => existsSync(server.dataDir))) throw error;
    }
  });
  const servers = cluster.servers;
  const baselineServer = servers[regionIds.length]!;
  await Promise.all([
    ...regionIds.map((id, index) => runSql(servers[index]!, accountsSql([id], settings.keysPerRegion))),
    runSql(baselineServer, accountsSql(regionIds, settings.keysPerRegion)),
  ]);

  const relays: { label: string; relay: DelayRelay }[] = [];
  const primaries: { id: string; host: string; port: number }[] = [];
  for (const [index, region] of settings.regions.entries()) {
    const server = servers[index]!;
    if (region.rttMs <= 0) {
      primaries.push({ id: region.id, host: server.host, port: server.port });
      continue;
    }
    const relay = await startDelayRelay({ target: server, rttMs: region.rttMs });
    atCleanup(() => relay.close());
    relays.push({ label: `${HOME} -> ${region.id}`, relay });
    primaries.push({ id: region.id, host: relay.host, port: relay.port });
  }
  const baselineRelay = await startDelayRelay({ target: baselineServer, rttMs: settings.baselineRttMs });
  atCleanup(() => baselineRelay.close());
  relays.push({ label: `clients -> single PostgreSQL (${settings.baselineRegion})`, relay: baselineRelay });

  const proxyPort = await freePort();
  const config = join(workDir, "geoproxy.toml");
  writeFileSync(config, geoConfigToml(proxyPort, primaries));
  const directory = join(workDir, "keys.tsv");
  const keyLines = regionIds.flatMap((id) =>
    Array.from({ length: settings.keysPerRegion }, (_, n) => `${regionKey(id, n)}\t${id}`),
  );
  writeFileSync(directory, `${keyLines.join("\n")}\n`);
  const geoproxy = startChild(
    "geoproxy",
    process.execPath,
    [settings.geoproxyCli, "serve", "--config", config, "--directory", directory, "--log-level", "warn"],
    join(workDir, "geoproxy.log"),
  );
  await waitUntilListening(geoproxy, proxyPort);
  return {
    proxy: { name: "geoproxy", host: "127.0.0.1", port: proxyPort },
    baseline: { name: "single PostgreSQL", host: baselineRelay.host, port: baselineRelay.port },
    relays,
    geoproxy,
    workDir,
  };
}
