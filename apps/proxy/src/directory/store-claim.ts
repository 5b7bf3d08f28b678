import { createHash } from "node:crypto";
import type { GeoConfig, Topology } from "@geo/core";
import { type ClaimConnection, connectWithin, queryWithin, stepTimedOut } from "@geo/txn";
import { runOn } from "../distributed/txn-service.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import { geoTablesOf } from "./directory-store.js";

/**
 * What a proxy claims over the data its directory routes, so that no two proxies route the same
 * geo-partitioned tables on directories that can disagree. A directory store changes (moves, first
 * writes) and nothing tells another proxy of it until `[directory_store] shared` exists; a TSV
 * directory never changes. So:
 *
 * - a proxy with `[directory_store]` takes its directory table and every geo-partitioned table
 *   exclusively: it is the only proxy over them;
 * - a proxy without one takes every geo-partitioned table shared: several of them can run together
 *   (their directories never change), but not beside a proxy whose directory does.
 */
export interface ClaimedName {
  /** `directory`: a `[directory_store]` table; `table`: a geo-partitioned table. */
  readonly kind: "directory" | "table";
  /** Schema-qualified (`public.users`), so `users` and `public.users` are one name. */
  readonly name: string;
  readonly mode: "exclusive" | "shared";
  /** The advisory lock key: 8 bytes of a SHA-256 of the kind and the name. */
  readonly key: bigint;
}

/** The names `config` makes this proxy claim; none when it routes no geo-partitioned table. */
export function claimedNames(config: GeoConfig, topology: Topology): ClaimedName[] {
  const store = config.directoryStore;
  const mode = store === undefined ? "shared" : "exclusive";
  const names: ClaimedName[] = geoTablesOf(topology).map((geo) => named("table", geo.table, mode));
  if (store !== undefined) names.unshift(named("directory", store.table, "exclusive"));
  return names;
}

function named(kind: ClaimedName["kind"], table: string, mode: ClaimedName["mode"]): ClaimedName {
  const name = table.includes(".") ? table : `public.${table}`;
  const key = createHash("sha256").update(`geoproxy ${kind} ${name}`).digest().readBigInt64BE(0);
  return { kind, name, mode, key };
}

/** The session holding a name this proxy wanted, as pg_locks and pg_stat_activity show it. */
export interface ClaimHolder {
  readonly name: ClaimedName;
  readonly pid?: number;
  readonly applicationName?: string;
  readonly clientAddress?: string;
}

export type StoreClaimResult =
  | { readonly region: string; readonly state: "held" }
  | { readonly region: string; readonly state: "elsewhere"; readonly holders: readonly ClaimHolder[] }
  | { readonly region: string; readonly state: "unreachable"; readonly error: unknown };

export interface StoreClaimOptions {
  readonly node: string;
  readonly names: readonly ClaimedName[];
  /** The claim's own connection to a region: never a pooled one, whose reset would drop the locks. */
  readonly connect: (region: string) => Promise<ClaimConnection>;
  /** The database a region's locks live in: regions served by one database share its claim. */
  readonly siteOf: (region: string) => string;
  readonly stepTimeoutMs: number;
  readonly log: Logger;
}

interface Site {
  state: "unclaimed" | "held" | "lost" | "elsewhere";
  connection: ClaimConnection | undefined;
  taking: Promise<StoreClaimResult> | undefined;
}

/** pg_locks shows a bigint advisory key as classid (high 32 bits) and objid (low 32), objsubid 1. */
function lockRow(key: bigint): string {
  const unsigned = BigInt.asUintN(64, key);
  return `(l.classid = ${unsigned >> 32n} AND l.objid = ${unsigned & 0xffffffffn})`;
}

/** The application_name of a claim session: whether its proxy changes its directory, and its node. */
export function storeClaimApplicationName(node: string, names: readonly ClaimedName[]): string {
  const kind = names.some((name) => name.kind === "directory") ? "store" : "tables";
  return `geoproxy ${kind} ${node}`.slice(0, 63);
}

/**
 * The claim itself: in every region's database, one session-level advisory lock per claimed name
 * (exclusive or shared), on a connection of its own kept for the life of the process. The server
 * drops the locks when the session ends, so a proxy that exits or is killed leaves nothing behind.
 * A claim lost while running (the region restarted) is taken again by `verify`; found held by
 * another process then, it is logged as an error, since two proxies now route on directories that
 * can disagree.
 *
 * @example
 * const claim = new StoreClaim({ node: "eu1", names: claimedNames(config, topology), connect, siteOf, stepTimeoutMs: 5000, log });
 * const refused = (await claim.takeAll(regions)).filter((result) => result.state === "elsewhere");
 */
export class StoreClaim {
  private readonly sites = new Map<string, Site>();
  private closed = false;

  constructor(private readonly options: StoreClaimOptions) {
    if (options.names.length === 0) throw new RangeError("a store claim needs at least one name");
  }

  takeAll(regions: readonly string[]): Promise<StoreClaimResult[]> {
    return Promise.all(regions.map((region) => this.take(region)));
  }

  /** Takes the claim in a region (at once when held already); concurrent calls share one attempt. */
  take(region: string): Promise<StoreClaimResult> {
    const site = this.site(region);
    if (site.state === "held") return Promise.resolve({ region, state: "held" });
    site.taking ??= this.attempt(region, site).finally(() => {
      site.taking = undefined;
    });
    return site.taking;
  }

  /** Takes the claim again wherever it was lost. */
  async verify(regions: readonly string[]): Promise<void> {
    await Promise.all(
      regions.map(async (region) => {
        const site = this.site(region);
        if (site.state !== "lost" && site.state !== "elsewhere") return;
        const result = await this.take(region);
        if (result.state === "elsewhere")
          this.options.log.error(
            { region, holders: result.holders },
            "another proxy took this proxy's directory claim while it was lost: two proxies now route these tables on directories that can disagree; stop one of them",
          );
      }),
    );
  }

  held(region: string): boolean {
    return this.site(region).state === "held";
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.sites.values()].map(async (site) => {
        await site.taking?.catch(() => undefined);
        const connection = site.connection;
        site.connection = undefined;
        site.state = "unclaimed";
        await connection?.close().catch(() => undefined);
      }),
    );
  }

  private site(region: string): Site {
    const id = this.options.siteOf(region);
    let site = this.sites.get(id);
    if (site === undefined) {
      site = { state: "unclaimed", connection: undefined, taking: undefined };
      this.sites.set(id, site);
    }
    return site;
  }

  private async attempt(region: string, site: Site): Promise<StoreClaimResult> {
    const { stepTimeoutMs, names } = this.options;
    if (this.closed) return { region, state: "unreachable", error: new Error("the claim is closed") };
    let connection: ClaimConnection;
    try {
      connection = await connectWithin({ connect: this.options.connect }, region, stepTimeoutMs, () =>
        stepTimedOut(region, "a connection for the directory claim", stepTimeoutMs),
      );
    } catch (error) {
      return { region, state: "unreachable", error };
    }
    try {
      const taken = await queryWithin(connection, takeSql(names), stepTimeoutMs, () =>
        stepTimedOut(region, "the directory claim's advisory locks", stepTimeoutMs),
      );
      const row = taken.rows[0] ?? {};
      if (this.closed) {
        await connection.close().catch(() => undefined);
        return { region, state: "unreachable", error: new Error("the claim is closed") };
      }
      const refused = names.filter((_, i) => !isTrue(row[`k${i}`]));
      if (refused.length === 0) {
        site.connection = connection;
        site.state = "held";
        void connection.ended.then(() => {
          if (site.connection !== connection) return;
          site.connection = undefined;
          if (this.closed) return;
          site.state = "lost";
          this.options.log.warn(
            { region },
            "the directory claim's connection ended; it is taken again at the next check",
          );
        });
        return { region, state: "held" };
      }
      const holders = await queryWithin(connection, holderSql(refused), stepTimeoutMs, () =>
        stepTimedOut(region, "the look-up of the directory claim's holder", stepTimeoutMs),
      )
        .then((result) => holdersOf(result.rows, refused))
        .catch(() => refused.map((name) => ({ name })));
      // Closing the session releases whichever of the locks it did get.
      await connection.close().catch(() => undefined);
      site.state = "elsewhere";
      return { region, state: "elsewhere", holders: holders.length > 0 ? holders : [{ name: refused[0]! }] };
    } catch (error) {
      await connection.close().catch(() => undefined);
      return { region, state: "unreachable", error };
    }
  }
}

/** Server-side TCP keepalive of the claim's session, so a vanished holder's locks go within ~25 s. */
const KEEPALIVES = [
  ["tcp_keepalives_idle", "10"],
  ["tcp_keepalives_interval", "5"],
  ["tcp_keepalives_count", "3"],
] as const;

function takeSql(names: readonly ClaimedName[]): string {
  const keepalives = KEEPALIVES.map(
    ([name, value]) => `pg_catalog.set_config('${name}', '${value}', false) AS ${name}`,
  );
  const locks = names.map(
    (name, i) =>
      `pg_catalog.${name.mode === "shared" ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock"}(${name.key}) AS k${i}`,
  );
  return `SELECT ${[...keepalives, ...locks].join(", ")}`;
}

function holderSql(names: readonly ClaimedName[]): string {
  return (
    "SELECT l.classid::text AS classid, l.objid::text AS objid, l.pid, a.application_name, host(a.client_addr) AS client_address" +
    " FROM pg_catalog.pg_locks l LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid" +
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid <> pg_catalog.pg_backend_pid()" +
    " AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())" +
    ` AND (${names.map((name) => lockRow(name.key)).join(" OR ")}) ORDER BY l.pid`
  );
}

function holdersOf(rows: readonly Record<string, unknown>[], names: readonly ClaimedName[]): ClaimHolder[] {
  const holders: ClaimHolder[] = [];
  for (const row of rows) {
    const key = BigInt.asIntN(64, (BigInt(String(row["classid"])) << 32n) | BigInt(String(row["objid"])));
    const name = names.find((candidate) => candidate.key === key);
    if (name === undefined) continue;
    const pid = Number(row["pid"]);
    const applicationName = row["application_name"];
    const clientAddress = row["client_address"];
    holders.push({
      name,
      ...(Number.isInteger(pid) ? { pid } : {}),
      ...(typeof applicationName === "string" && applicationName !== "" ? { applicationName } : {}),
      ...(typeof clientAddress === "string" ? { clientAddress } : {}),
    });
  }
  return holders;
}

function isTrue(value: unknown): boolean {
  return value === true || value === "t" || value === "true";
}

/** `another live proxy (pid 12, application_name "geoproxy store eu1", from 10.0.0.5)`. */
function describeHolder(holder: ClaimHolder): string {
  const parts = [
    holder.pid === undefined ? undefined : `pid ${holder.pid}`,
    holder.applicationName === undefined ? undefined : `application_name "${holder.applicationName}"`,
    holder.clientAddress === undefined ? undefined : `from ${holder.clientAddress}`,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? "another live proxy" : `another live proxy (${parts.join(", ")})`;
}

/**
 * The start-up error for a region where another live proxy holds what this one needs: which name,
 * who holds it, and why the two cannot run together yet.
 */
export function claimRefusal(region: string, holders: readonly ClaimHolder[], wantsStore: boolean): string {
  const first = holders.find((holder) => holder.name.kind === "directory") ?? holders[0]!;
  const who = describeHolder(first);
  const fix =
    "a directory shared by several proxies ([directory_store] shared = true) is not available yet: stop the other proxy, or run this one over other servers";
  if (first.name.kind === "directory")
    return `[directory_store] table ${first.name.name} is in use in region ${region} by ${who}: two proxies over one directory store would each move and place keys the other does not see; ${fix}`;
  const tables = [...new Set(holders.map((holder) => holder.name.name))].sort().join(", ");
  return wantsStore
    ? `the geo-partitioned tables ${tables} are routed in region ${region} by ${who}, whose directory would not follow this proxy's [directory_store] (its moves and new keys); ${fix}`
    : `the geo-partitioned tables ${tables} are under the [directory_store] of ${who} in region ${region}: this proxy's directory would not follow its moves and new keys; ${fix}`;
}

/** The claim as the proxy runs it: taken at start, retaken where lost, closed at shutdown. */
export interface RunningStoreClaim {
  /** A region down at start, now answering: its claim is taken before it serves. Rejects while refused. */
  take(region: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenStoreClaimOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly pools: RegionPools;
  readonly log: Logger;
  /** The regions that answered at start. */
  readonly regions: readonly string[];
}

/**
 * Takes the directory claim in `regions` before the proxy serves. Resolves with the running claim
 * (undefined when the proxy routes no geo-partitioned table), or with one line per region where
 * another live proxy holds what this one needs: then nothing is held and the proxy must not start.
 */
export async function openStoreClaim(
  options: OpenStoreClaimOptions,
): Promise<{ claim?: RunningStoreClaim; refused: string[] }> {
  const { config, topology, log } = options;
  const names = claimedNames(config, topology);
  if (names.length === 0) return { refused: [] };
  const applicationName = storeClaimApplicationName(config.server.node, names);
  const claim = new StoreClaim({
    node: config.server.node,
    names,
    connect: async (region) => {
      // Its own connection, never pooled: a pool's reset would drop the locks.
      const connection = await options.pools.connectClaim(region, applicationName);
      return {
        ended: connection.closed,
        query: (sql) => runOn(connection, sql),
        abandon: () => connection.destroy(),
        close: () => connection.close(),
      };
    },
    // The database the proxy's own connections open, where the directory table lives.
    siteOf: (region) => {
      const key = options.pools.keyOf(region, topology.region(region)?.primary.user ?? "postgres");
      return `${key.host}:${key.port}/${key.database}`;
    },
    stepTimeoutMs: config.txn.stepTimeoutMs,
    log,
  });
  let results = await claim.takeAll(options.regions);
  // A proxy killed a moment ago may hold it until its server sees the socket close.
  for (const waitMs of [200, 400, 800]) {
    if (!results.some((result) => result.state === "elsewhere")) break;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    results = await claim.takeAll(options.regions);
  }
  const wantsStore = config.directoryStore !== undefined;
  const refused = results.flatMap((result) =>
    result.state === "elsewhere" ? [claimRefusal(result.region, result.holders, wantsStore)] : [],
  );
  if (refused.length > 0) {
    await claim.close();
    return { refused };
  }
  for (const result of results)
    if (result.state === "unreachable")
      log.warn(
        { region: result.region, err: result.error },
        "cannot take the directory claim in this region yet: it is taken when the region answers",
      );
  const regions = topology.regionIds;
  const timer = setInterval(
    () => void claim.verify(regions).catch(() => undefined),
    config.txn.recoveryIntervalMs,
  );
  timer.unref();
  return {
    refused: [],
    claim: {
      async take(region) {
        const result = await claim.take(region);
        if (result.state === "held") return;
        if (result.state === "unreachable") throw result.error;
        const line = claimRefusal(region, result.holders, wantsStore);
        log.error({ region, holders: result.holders }, line);
        throw new Error(line);
      },
      async close() {
        clearInterval(timer);
        await claim.close();
      },
    },
  };
}
