import { createHash } from "node:crypto";
import {
  type ClaimHolder,
  nodeClaimedElsewhere,
  nodeClaimNotHeld,
  stepTimedOut,
  type TxnError,
} from "./errors.js";
import type { RecoveryConnection } from "./participant.js";
import { connectWithin, queryWithin } from "./step-deadline.js";

/**
 * A connection kept for the life of the claim: PostgreSQL holds a session-level advisory lock
 * until the session ends, so the claim dies with the process, however it dies.
 */
export interface ClaimConnection extends RecoveryConnection {
  /** Settles once the session is over (closed, broken, the server gone). */
  readonly ended: Promise<void>;
}

/** Opens the claim's own connection to a region: never a pooled one, whose reset would drop the lock. */
export interface ClaimConnector {
  connect(region: string): Promise<ClaimConnection>;
}

/** Where the claim stands in one region. */
export const CLAIM_STATES = ["unclaimed", "held", "lost", "elsewhere"] as const;
export type ClaimState = (typeof CLAIM_STATES)[number];

/** The error a claim refused by another holder is reported with: a SQLSTATE and a hint naming the fix. */
export type ClaimRefusal = Error & { readonly code: string; readonly hint?: string | undefined };

export type ClaimResult =
  | { readonly region: string; readonly state: "held" }
  | {
      readonly region: string;
      readonly state: "elsewhere";
      readonly error: ClaimRefusal;
      readonly holder?: ClaimHolder;
    }
  | { readonly region: string; readonly state: "unreachable"; readonly error: unknown };

export interface ClaimChange {
  readonly region: string;
  readonly state: ClaimState;
  readonly holder?: ClaimHolder;
  readonly error?: unknown;
}

export interface NodeClaimOptions {
  /** The node name, for messages. */
  readonly node: string;
  /** Every gid prefix this process issues (statements and moves): one lock for each (`claimKey`). */
  readonly prefixes?: readonly string[];
  /** Further advisory lock keys held the same way, for something else only one process may own. */
  readonly keys?: readonly bigint[];
  /** The error for a region where another session holds a key; default `nodeClaimedElsewhere`. */
  readonly refused?: (region: string, holder: ClaimHolder | undefined) => ClaimRefusal;
  readonly connector: ClaimConnector;
  /** Longest wait for the claim's connection and for each of its statements. Default 5 s. */
  readonly stepTimeoutMs?: number;
  /** Told when a region's state changes (taken, lost, held by another process). */
  readonly onChange?: (change: ClaimChange) => void;
  /**
   * The database a region's claim lives in (for example `host:port/database`): regions that share
   * one share its claim. A session-level advisory lock is one per database, so a second session
   * of the same process asking for it there would find it held, by itself. Default: each region
   * its own.
   */
  readonly siteOf?: (region: string) => string;
}

interface RegionClaim {
  state: ClaimState;
  connection: ClaimConnection | undefined;
  taking: Promise<ClaimResult> | undefined;
  /** A check of the held claim under way (never more than one per connection). */
  checking: Promise<boolean> | undefined;
}

/**
 * The advisory lock key of a gid prefix: the first 8 bytes of a SHA-256 of it, as a signed 64-bit
 * integer (what pg_try_advisory_lock(bigint) takes). Different prefixes collide only by chance
 * (1 in 2^64); the same prefix, however its node name was spelt, always gives the same key.
 */
export function claimKey(prefix: string): bigint {
  return createHash("sha256").update(`geoproxy gid prefix ${prefix}`).digest().readBigInt64BE(0);
}

/** pg_locks shows a bigint advisory key as classid (high 32 bits) and objid (low 32), objsubid 1. */
function lockRow(key: bigint): string {
  const unsigned = BigInt.asUintN(64, key);
  return `(l.classid = ${unsigned >> 32n} AND l.objid = ${unsigned & 0xffffffffn})`;
}

/** Server-side TCP keepalive of the claim's session: idle seconds, interval seconds, probes. */
const KEEPALIVES = [
  ["tcp_keepalives_idle", "10"],
  ["tcp_keepalives_interval", "5"],
  ["tcp_keepalives_count", "3"],
] as const;

function isTrue(value: unknown): boolean {
  return value === true || value === "t" || value === "true";
}

/**
 * The claim a proxy holds on its node name in each region: a session-level advisory lock per gid
 * prefix it issues, on a connection of its own. Two processes can never both hold it in one
 * database, and it is released by the server when the holder's session ends, so a crashed proxy's
 * claim is gone as soon as its connections are. The coordinator decides, and recovery acts, in a
 * region only while this process holds the claim there (see README, "One coordinator per prefix").
 *
 * @example
 * const claim = new NodeClaim({ node: "eu1", prefixes: ["geo_eu1", "geo_eu1_mv"], connector });
 * const refused = (await claim.takeAll(["eu-west", "us-east"])).filter((r) => r.state === "elsewhere");
 */
export class NodeClaim {
  readonly node: string;
  readonly keys: readonly bigint[];
  private readonly options: NodeClaimOptions;
  private readonly stepTimeoutMs: number;
  private readonly regions = new Map<string, RegionClaim>();
  private closed = false;

  constructor(options: NodeClaimOptions) {
    this.options = options;
    this.node = options.node;
    this.keys = [...new Set([...(options.prefixes ?? []).map(claimKey), ...(options.keys ?? [])])];
    if (this.keys.length === 0) throw new RangeError("a claim needs at least one prefix or key");
    this.stepTimeoutMs = options.stepTimeoutMs ?? 5_000;
  }

  state(region: string): ClaimState {
    return this.regions.get(this.siteOf(region))?.state ?? "unclaimed";
  }

  held(region: string): boolean {
    return this.state(region) === "held";
  }

  /** The regions among `regions` where the claim is not held, as the error a commit is refused with. */
  refusal(regions: readonly string[]): TxnError | null {
    const missing = regions.filter((region) => !this.held(region));
    return missing.length === 0 ? null : nodeClaimNotHeld(this.node, missing);
  }

  takeAll(regions: readonly string[]): Promise<ClaimResult[]> {
    return Promise.all(regions.map((region) => this.take(region)));
  }

  /** Takes the claim in a region (at once when held already); concurrent calls share one attempt. */
  take(region: string): Promise<ClaimResult> {
    const entry = this.entry(region);
    if (entry.state === "held") return Promise.resolve({ region, state: "held" });
    entry.taking ??= this.attempt(region, entry).finally(() => {
      entry.taking = undefined;
    });
    return entry.taking;
  }

  /**
   * Checks, on each claim's own connection, that its locks are still this session's, and takes the
   * claim again in every region where it is not held. A check that fails, or finds the locks gone,
   * loses the claim (the connection is closed). A check the server has not answered within the step
   * timeout proves nothing either way and is left running: the session, and with it the locks, stand
   * until it ends, and closing it here would be what releases them (a frozen server would then wake
   * up without them). Only the session ending, or an answer, changes the state.
   */
  async verify(regions: readonly string[]): Promise<ClaimResult[]> {
    return Promise.all(
      regions.map(async (region) => {
        const entry = this.entry(region);
        const connection = entry.connection;
        if (entry.state === "held" && connection !== undefined) {
          entry.checking ??= this.check(region, entry, connection).finally(() => {
            entry.checking = undefined;
          });
          let timer: NodeJS.Timeout | undefined;
          const pending = new Promise<"pending">((resolve) => {
            timer = setTimeout(() => resolve("pending"), this.stepTimeoutMs);
          });
          const verdict = await Promise.race([entry.checking, pending]);
          clearTimeout(timer);
          if (verdict !== false) return { region, state: "held" } as const;
        }
        return this.take(region);
      }),
    );
  }

  /** True when the session still holds every lock; otherwise the claim is lost (false). */
  private async check(region: string, entry: RegionClaim, connection: ClaimConnection): Promise<boolean> {
    try {
      const result = await connection.query(this.checkSql());
      if (Number(result.rows[0]?.["held"]) === this.keys.length) return true;
      if (entry.connection === connection)
        this.lose(region, entry, new Error("the claim's locks are no longer held by its session"));
    } catch (error) {
      if (entry.connection === connection) this.lose(region, entry, error);
    }
    return false;
  }

  /** Ends every claim connection, which releases the locks. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.regions.values()].map(async (entry) => {
        await entry.taking?.catch(() => undefined);
        const connection = entry.connection;
        entry.connection = undefined;
        entry.state = "unclaimed";
        await connection?.close().catch(() => undefined);
      }),
    );
  }

  private entry(region: string): RegionClaim {
    const site = this.siteOf(region);
    let entry = this.regions.get(site);
    if (entry === undefined) {
      entry = { state: "unclaimed", connection: undefined, taking: undefined, checking: undefined };
      this.regions.set(site, entry);
    }
    return entry;
  }

  private siteOf(region: string): string {
    return this.options.siteOf?.(region) ?? region;
  }

  private async attempt(region: string, entry: RegionClaim): Promise<ClaimResult> {
    if (this.closed) return { region, state: "unreachable", error: new Error("the claim is closed") };
    let connection: ClaimConnection;
    try {
      connection = await connectWithin(this.options.connector, region, this.stepTimeoutMs, () =>
        stepTimedOut(region, "a connection for the node claim", this.stepTimeoutMs),
      );
    } catch (error) {
      return { region, state: "unreachable", error };
    }
    try {
      const taken = await queryWithin(connection, this.takeSql(), this.stepTimeoutMs, () =>
        stepTimedOut(region, "pg_try_advisory_lock", this.stepTimeoutMs),
      );
      const row = taken.rows[0] ?? {};
      if (this.closed) {
        await connection.close().catch(() => undefined);
        return { region, state: "unreachable", error: new Error("the claim is closed") };
      }
      if (this.keys.every((_, i) => isTrue(row[`k${i}`]))) {
        entry.connection = connection;
        this.change(region, entry, "held");
        void connection.ended.then(() => {
          if (entry.connection === connection)
            this.lose(region, entry, new Error("the claim's connection ended"));
        });
        return { region, state: "held" };
      }
      const holder = await this.holder(region, connection).catch(() => undefined);
      // Closing the session releases whichever of the locks it did get.
      await connection.close().catch(() => undefined);
      const error = this.options.refused?.(region, holder) ?? nodeClaimedElsewhere(this.node, region, holder);
      this.change(region, entry, "elsewhere", holder, error);
      return { region, state: "elsewhere", error, ...(holder === undefined ? {} : { holder }) };
    } catch (error) {
      await connection.close().catch(() => undefined);
      return { region, state: "unreachable", error };
    }
  }

  private lose(region: string, entry: RegionClaim, error: unknown): void {
    const connection = entry.connection;
    entry.connection = undefined;
    void connection?.close().catch(() => undefined);
    if (this.closed) return;
    this.change(region, entry, "lost", undefined, error);
  }

  private change(
    region: string,
    entry: RegionClaim,
    state: ClaimState,
    holder?: ClaimHolder,
    error?: unknown,
  ): void {
    if (entry.state === state) return;
    entry.state = state;
    try {
      this.options.onChange?.({
        region,
        state,
        ...(holder === undefined ? {} : { holder }),
        ...(error === undefined ? {} : { error }),
      });
    } catch {
      // A listener's failure never changes the claim.
    }
  }

  private takeSql(): string {
    // The server's side of the claim's TCP connection is probed too, so a holder whose machine
    // vanished (no FIN ever sent) loses its claim within about 25 s instead of the system's 2 hours.
    const keepalives = KEEPALIVES.map(
      ([name, value]) => `pg_catalog.set_config('${name}', '${value}', false) AS ${name}`,
    );
    const columns = this.keys.map((key, i) => `pg_catalog.pg_try_advisory_lock(${key}) AS k${i}`);
    return `SELECT ${[...keepalives, ...columns].join(", ")}`;
  }

  private checkSql(): string {
    return (
      "SELECT count(*) AS held FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' AND l.granted" +
      ` AND l.objsubid = 1 AND l.pid = pg_catalog.pg_backend_pid() AND (${this.keys.map(lockRow).join(" OR ")})`
    );
  }

  private async holder(region: string, connection: ClaimConnection): Promise<ClaimHolder | undefined> {
    const result = await queryWithin(
      connection,
      "SELECT l.pid, a.application_name, host(a.client_addr) AS client_address" +
        " FROM pg_catalog.pg_locks l LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid" +
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid <> pg_catalog.pg_backend_pid()" +
        " AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())" +
        ` AND (${this.keys.map(lockRow).join(" OR ")}) LIMIT 1`,
      this.stepTimeoutMs,
      () => stepTimedOut(region, "the look-up of the claim's holder", this.stepTimeoutMs),
    );
    const row = result.rows[0];
    if (row === undefined) return undefined;
    const pid = Number(row["pid"]);
    const name = row["application_name"];
    const address = row["client_address"];
    return {
      ...(Number.isInteger(pid) ? { pid } : {}),
      ...(typeof name === "string" ? { applicationName: name } : {}),
      ...(typeof address === "string" ? { clientAddress: address } : {}),
    };
  }
}
