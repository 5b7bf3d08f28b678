import { randomInt } from "node:crypto";
import type { RegionId } from "@geo/core";
import type { Quorum } from "./quorum.js";
import type { SqlRows } from "./region-runner.js";
import type { SharedTables } from "./shared-tables.js";
import { literal, textArray } from "./sql-text.js";

/** Rounds a claim tries before it gives up (each after a short random pause). */
const MAX_ROUNDS = 6;

/** A ballot: its round, then the proposing node, so no two proxies ever propose the same one. */
interface Ballot {
  readonly n: number;
  readonly by: string;
}

/**
 * The first placement of new keys with a majority authority: single-decree Paxos per key, every
 * region's database an acceptor (the `<table>_paxos` table). A round is two steps, each taken
 * once a majority of regions committed it: a prepare, where each acceptor promises to accept no
 * lower ballot and tells what it accepted already; and an accept of the region the highest
 * accepted ballot names (or, when none did, the one this proxy wants). A key a majority accepted
 * is placed for good: a later claim of it through any proxy prepares with a higher ballot, finds
 * that value in at least one acceptor, and proposes it again. The chosen region is then written
 * as the key's directory entry in every region (version 0; a move raises it), which is what the
 * visits of the other proxies read.
 */
export class PaxosClaims {
  /** The next round this proxy proposes with: above any it saw promised. */
  #round = 1;

  constructor(
    private readonly quorum: Quorum,
    private readonly tables: SharedTables,
    private readonly node: string,
  ) {}

  /**
   * Places `keys` in `region` unless a claim of them chose another region already. Resolves with
   * each key's chosen region; rejects when no round reached a majority.
   */
  async claim(keys: readonly string[], region: RegionId): Promise<Map<string, RegionId>> {
    const chosen = new Map<string, RegionId>();
    let open = [...keys];
    let lastError: unknown;
    for (let round = 0; round < MAX_ROUNDS && open.length > 0; round++) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, randomInt(5, 25 * round)));
      try {
        const decided = await this.#tryRound(open, region);
        for (const [key, placed] of decided) chosen.set(key, placed);
        open = open.filter((key) => !chosen.has(key));
      } catch (error) {
        lastError = error;
      }
    }
    if (open.length > 0)
      throw lastError instanceof Error
        ? lastError
        : new Error(`competing claims of ${open.length} key(s) did not settle in ${MAX_ROUNDS} rounds`);
    // Written where the visits read it, without waiting (a claim is two steps): until a peer's
    // visit reads it, that peer's own claim of the key chooses the same region. A region that
    // misses it is caught up when it answers again.
    void this.quorum.run(this.#learnSql(chosen)).catch(() => undefined);
    return chosen;
  }

  /**
   * One round for `keys`: the keys whose region a majority accepted, with it. A key a region of
   * the majority already lists has moved, or was placed, since: its newest entry is where it is.
   */
  async #tryRound(keys: readonly string[], wanted: RegionId): Promise<Map<string, RegionId>> {
    const ballot: Ballot = { n: this.#round++, by: this.node };
    const promises = [...(await this.quorum.run(this.#prepareSql(keys, ballot))).values()].map(byKey);
    const proposals = new Map<string, RegionId>();
    const decided = new Map<string, RegionId>();
    for (const key of keys) {
      const listed = newestEntry(promises.map((answer) => answer.get(key)));
      if (listed !== undefined) {
        decided.set(key, listed);
        continue;
      }
      let promised = 0;
      let highest: { n: number; by: string; region: string } | undefined;
      for (const answer of promises) {
        const row = answer.get(key);
        if (row === undefined) continue;
        this.#round = Math.max(this.#round, Number(row["seen_n"] ?? 0) + 1);
        if (row["promised"] !== "t") continue;
        promised++;
        const n = row["accepted_n"];
        if (n == null || row["accepted_region"] == null) continue;
        const accepted = { n: Number(n), by: row["accepted_by"] ?? "", region: row["accepted_region"] };
        if (highest === undefined || compare(accepted, highest) > 0) highest = accepted;
      }
      if (promised >= this.quorum.need) proposals.set(key, highest?.region ?? wanted);
    }
    if (proposals.size === 0) return decided;
    const accepts = [...(await this.quorum.run(this.#acceptSql(proposals, ballot))).values()].map(byKey);
    for (const [key, region] of proposals) {
      let accepted = 0;
      for (const answer of accepts) if (answer.has(key)) accepted++;
      if (accepted >= this.quorum.need) decided.set(key, region);
    }
    return decided;
  }

  /**
   * Promises `ballot` for each key whose promise is lower, returning what the acceptor accepted;
   * `seen_n` is the promise it held before (a refused proposer starts its next round above it).
   */
  #prepareSql(keys: readonly string[], ballot: Ballot): string {
    const t = this.tables.ballots;
    return `WITH want AS (SELECT DISTINCT unnest(${textArray(keys)}) AS key), promised AS (INSERT INTO ${t} AS p (key, promised_n, promised_by) SELECT key, ${ballot.n}, ${literal(ballot.by)} FROM want ON CONFLICT (key) DO UPDATE SET promised_n = EXCLUDED.promised_n, promised_by = EXCLUDED.promised_by WHERE (p.promised_n, p.promised_by COLLATE "C") < (EXCLUDED.promised_n, EXCLUDED.promised_by COLLATE "C") RETURNING key, accepted_n, accepted_by, accepted_region) SELECT w.key, (x.key IS NOT NULL) AS promised, x.accepted_n::text AS accepted_n, x.accepted_by, x.accepted_region, b.promised_n::text AS seen_n, d.region AS entry_region, d.version::text AS entry_version FROM want w LEFT JOIN promised x ON x.key = w.key LEFT JOIN ${t} b ON b.key = w.key LEFT JOIN ${this.tables.directory} d ON d.key = w.key`;
  }

  /** Accepts each key's proposal unless the acceptor promised a higher ballot meanwhile; returns the keys accepted. */
  #acceptSql(proposals: ReadonlyMap<string, RegionId>, ballot: Ballot): string {
    const t = this.tables.ballots;
    const keys = textArray([...proposals.keys()]);
    const regions = textArray([...proposals.values()]);
    const n = ballot.n;
    const by = literal(ballot.by);
    return `INSERT INTO ${t} AS p (key, promised_n, promised_by, accepted_n, accepted_by, accepted_region) SELECT k, ${n}, ${by}, ${n}, ${by}, r FROM unnest(${keys}, ${regions}) AS u(k, r) ON CONFLICT (key) DO UPDATE SET promised_n = EXCLUDED.promised_n, promised_by = EXCLUDED.promised_by, accepted_n = EXCLUDED.accepted_n, accepted_by = EXCLUDED.accepted_by, accepted_region = EXCLUDED.accepted_region WHERE (p.promised_n, p.promised_by COLLATE "C") <= (EXCLUDED.promised_n, EXCLUDED.promised_by COLLATE "C") RETURNING key`;
  }

  /** The chosen regions as directory entries (a key listed already keeps its entry: a move's is newer). */
  #learnSql(chosen: ReadonlyMap<string, RegionId>): string {
    const keys = textArray([...chosen.keys()]);
    const regions = textArray([...chosen.values()]);
    return `INSERT INTO ${this.tables.directory} (key, region, written_xid) SELECT k, r, pg_catalog.pg_current_xact_id() FROM unnest(${keys}, ${regions}) AS u(k, r) ON CONFLICT (key) DO NOTHING`;
  }
}

/** The region of the highest-versioned directory entry among the acceptors' answers, if any lists one. */
function newestEntry(rows: readonly (Record<string, string | null> | undefined)[]): RegionId | undefined {
  let newest: { region: string; version: number } | undefined;
  for (const row of rows) {
    const region = row?.["entry_region"];
    if (region == null) continue;
    const version = Number(row?.["entry_version"] ?? 0);
    if (newest === undefined || version > newest.version) newest = { region, version };
  }
  return newest?.region;
}

function byKey(answer: SqlRows): Map<string, Record<string, string | null>> {
  const rows = new Map<string, Record<string, string | null>>();
  for (const row of answer.rows) if (row["key"] != null) rows.set(row["key"], row);
  return rows;
}

/** Ballots in the acceptors' order: the round, then the node's name byte by byte (COLLATE "C"). */
function compare(a: Ballot, b: Ballot): number {
  if (a.n !== b.n) return a.n - b.n;
  return Buffer.compare(Buffer.from(a.by), Buffer.from(b.by));
}
