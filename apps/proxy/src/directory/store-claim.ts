import { createHash } from "node:crypto";
import type { GeoConfig, Topology } from "@geo/core";
import { type ClaimConnection, connectWithin, queryWithin, stepTimedOut } from "@geo/txn";
import type { Logger } from "../log.js";
import { geoTablesOf } from "./directory-store.js";

/**
 * What a proxy claims over the data its directory routes, so that no two proxies route the same
 * geo-partitioned tables on directories that can disagree. A directory store changes (moves, first
 * writes), and unless it is shared nothing tells another proxy of it; a TSV directory never
 * changes. So:
 *
 * - a proxy with `[directory_store]` takes its directory table and every geo-partitioned table
 *   exclusively: it is the only proxy over them;
 * - a proxy without one takes every geo-partitioned table shared: several of them can run together
 *   (their directories never change), but not beside a proxy whose directory does;
 * - a proxy of a shared directory (`shared = true`) takes the directory table and the tables shared
 *   too, so its peers run beside it, and refuses to run beside a proxy of the second kind (and
 *   that one beside it): the two kinds are told apart by their claim sessions' application_name.
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
  const mode = store === undefined || store.shared ? "shared" : "exclusive";
  const names: ClaimedName[] = geoTablesOf(topology).map((geo) => named("table", geo.table, mode));
  if (store !== undefined) names.unshift(named("directory", store.table, mode));
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
  return `geoproxy ${claimKind(names)} ${node}`.slice(0, 63);
}

/** `store`: one proxy over its directory store; `shared`: a shared directory's; `tables`: a TSV directory's. */
function claimKind(names: readonly ClaimedName[]): "store" | "shared" | "tables" {
  const directory = names.find((name) => name.kind === "directory");
  if (directory === undefined) return "tables";
  return directory.mode === "shared" ? "shared" : "store";
}

/** The other kind that shares these locks but must not run beside this one (see above). */
function incompatibleKind(names: readonly ClaimedName[]): string | undefined {
  const kind = claimKind(names);
  return kind === "tables" ? "shared" : kind === "shared" ? "tables" : undefined;
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
      const other = incompatibleKind(names);
      if (refused.length === 0 && other !== undefined) {
        // Each kind checks for the other only after its own locks are held, so of two starting
        // together at least one sees the other.
        const beside = await queryWithin(connection, holderSql(names), stepTimeoutMs, () =>
          stepTimedOut(region, "the look-up of the directory claim's other holders", stepTimeoutMs),
        );
        const holders = holdersOf(beside.rows, names).filter((holder) =>
          holder.applicationName?.startsWith(`geoproxy ${other} `),
        );
        if (holders.length > 0) {
          await connection.close().catch(() => undefined);
          site.state = "elsewhere";
          return { region, state: "elsewhere", holders };
        }
      }
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
