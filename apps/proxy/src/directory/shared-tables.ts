import { DirectoryTable } from "./directory-table.js";
import { ident, literal, qualified, textArray } from "./sql-text.js";

/**
 * The tables a shared directory keeps where its proxies agree (the authority region, or every
 * region with a majority authority), beside the directory table: the proxies' heartbeats, the
 * moves announced to them, their confirmations, the moves withdrawn, and the claims' ballots.
 * Every directory row written there carries the id of the transaction that wrote it
 * (`written_xid`), so a proxy reads only what changed since its last visit: rows of transactions
 * that visit's snapshot did not see, committed since or still running (read again next time);
 * and a `version` every move raises, so that of two regions' rows for a key the newer wins.
 */
export class SharedTables {
  readonly directory: string;
  /** The configured name, unquoted. */
  readonly plain: string;
  readonly peers: string;
  readonly moves: string;
  readonly confirms: string;
  /** One row per key a live announcement moves: a second announcement of a key fails to insert. */
  readonly moving: string;
  /**
   * Moves withdrawn, kept a week: a region that missed a withdrawal (down then) still lists the
   * move, and this marker in the others says it is over.
   */
  readonly ended: string;
  /** Each claimed key's ballots (single-decree Paxos, every region an acceptor): majority only. */
  readonly ballots: string;
  /** The channel a move's announcement and withdrawal NOTIFY, so that peers visit at once. */
  readonly channel: string;
  private readonly versionIndex: string;
  /** The version index, schema-qualified as the directory table is. */
  private readonly indexName: string;

  constructor(table: string) {
    const dot = table.indexOf(".");
    const schema = dot < 0 ? undefined : table.slice(0, dot);
    const base = dot < 0 ? table : table.slice(dot + 1);
    const sibling = (suffix: string): string =>
      (schema === undefined ? [] : [ident(schema)]).concat(ident(`${base}${suffix}`)).join(".");
    this.directory = qualified(table);
    this.plain = table;
    this.peers = sibling("_peers");
    this.moves = sibling("_moves");
    this.confirms = sibling("_confirms");
    this.moving = sibling("_moving");
    this.ended = sibling("_ended");
    this.ballots = sibling("_paxos");
    this.channel = `${base}_wake`.slice(0, 63);
    this.versionIndex = ident(`${base}_written_xid`.slice(0, 63));
    this.indexName = (schema === undefined ? [] : [ident(schema)]).concat(this.versionIndex).join(".");
  }

  /**
   * Idempotent: every proxy of the shared directory runs it at start, in the authority. The
   * directory table is altered and indexed only when the catalog says it is not yet: ALTER TABLE
   * and CREATE INDEX lock the table even when IF NOT EXISTS makes them do nothing, and a lock
   * queued behind a long transaction would stop every proxy's visit behind it.
   */
  createSql(): string {
    return [
      // A region whose server lost it (restored, or a crash with commits not yet on disk).
      new DirectoryTable(this.plain).createSql(),
      briefly([
        addMissing(this.directory, "written_xid", "xid8"),
        `  IF pg_catalog.to_regclass(${literal(this.indexName)}) IS NULL THEN
    CREATE INDEX IF NOT EXISTS ${this.versionIndex} ON ${this.directory} (written_xid);
  END IF;`,
        addMissing(this.directory, "version", "bigint NOT NULL DEFAULT 0"),
      ]),
      `CREATE TABLE IF NOT EXISTS ${this.peers} (
  node text PRIMARY KEY,
  home text NOT NULL,
  pid integer NOT NULL,
  sessions integer NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL,
  decision_log text,
  authority text,
  statements integer NOT NULL DEFAULT 0,
  holds integer NOT NULL DEFAULT 0,
  heartbeat_at timestamptz NOT NULL DEFAULT now()
)`,
      `CREATE TABLE IF NOT EXISTS ${this.moves} (
  id bigserial PRIMARY KEY,
  mover text NOT NULL,
  keys text[] NOT NULL,
  target text NOT NULL,
  announced_at timestamptz NOT NULL DEFAULT now(),
  step integer NOT NULL DEFAULT 1
)`,
      `CREATE TABLE IF NOT EXISTS ${this.confirms} (
  move_id bigint NOT NULL,
  node text NOT NULL,
  confirmed_at timestamptz NOT NULL DEFAULT now(),
  step integer NOT NULL DEFAULT 1,
  PRIMARY KEY (move_id, node)
)`,
      // Tables of an earlier version lack these; small tables, so the locks are brief.
      briefly([
        addMissing(this.peers, "decision_log", "text"),
        addMissing(this.peers, "authority", "text"),
        addMissing(this.peers, "statements", "integer NOT NULL DEFAULT 0"),
        addMissing(this.peers, "holds", "integer NOT NULL DEFAULT 0"),
        addMissing(this.moves, "step", "integer NOT NULL DEFAULT 1"),
        addMissing(this.confirms, "step", "integer NOT NULL DEFAULT 1"),
      ]),
      `CREATE TABLE IF NOT EXISTS ${this.moving} (
  key text PRIMARY KEY,
  move_id bigint NOT NULL
)`,
      `CREATE TABLE IF NOT EXISTS ${this.ended} (
  move_id bigint PRIMARY KEY,
  ended_at timestamptz NOT NULL DEFAULT now()
)`,
      `CREATE TABLE IF NOT EXISTS ${this.ballots} (
  key text PRIMARY KEY,
  promised_n bigint NOT NULL,
  promised_by text NOT NULL,
  accepted_n bigint,
  accepted_by text,
  accepted_region text
)`,
    ].join(";\n");
  }

  /** One proxy's heartbeat: committed on its own, before the visit reads anything. */
  heartbeatSql(beat: {
    node: string;
    home: string;
    pid: number;
    sessions: number;
    startedAt: Date;
    decisionLog: string;
    /** `majority`, or the authority region's id: proxies that name different ones refuse to route. */
    authority: string;
    /** Statements under way on geo-partitioned tables, and the moves whose keys it holds. */
    statements?: number;
    holds?: number;
  }): string {
    return `INSERT INTO ${this.peers} (node, home, pid, sessions, started_at, decision_log, authority, statements, holds, heartbeat_at) VALUES (${literal(beat.node)}, ${literal(beat.home)}, ${beat.pid}, ${beat.sessions}, ${literal(beat.startedAt.toISOString())}, ${literal(beat.decisionLog)}, ${literal(beat.authority)}, ${beat.statements ?? 0}, ${beat.holds ?? 0}, now()) ON CONFLICT (node) DO UPDATE SET home = EXCLUDED.home, pid = EXCLUDED.pid, sessions = EXCLUDED.sessions, started_at = EXCLUDED.started_at, decision_log = EXCLUDED.decision_log, authority = EXCLUDED.authority, statements = EXCLUDED.statements, holds = EXCLUDED.holds, heartbeat_at = now()`;
  }

  /**
   * What a visit reads, in one snapshot: that snapshot (where the next visit starts), the
   * directory rows written since snapshot `from` (every row with a written_xid when null), and
   * those of the keys `also`: those
   * of transactions it did not see, finished or not, so a transaction left open in the authority
   * does not make every later visit read again what the ones before it read; the peers with their
   * heartbeat's age by the authority's clock; the moves announced, with who confirmed each; and
   * which of the moves `endedOf` (those other regions listed at the last visit) or of those listed
   * here were withdrawn: a region that missed a withdrawal still lists its move.
   */
  visitSql(from: string | null, also: readonly string[] = [], endedOf: readonly string[] = []): string {
    const ids = `ARRAY[${endedOf.map((id) => `${literal(id)}::bigint`).join(", ")}]::bigint[]`;
    const snapshot = from === null ? "" : `${literal(from)}::pg_catalog.pg_snapshot`;
    const since =
      from === null
        ? "written_xid IS NOT NULL"
        : `(written_xid >= pg_catalog.pg_snapshot_xmin(${snapshot}) AND NOT pg_catalog.pg_visible_in_snapshot(written_xid, ${snapshot}))`;
    // `also`: keys the last visit left as they were (this proxy had changed them since it was sent).
    const changed = also.length === 0 ? since : `(${since} OR key = ANY(${textArray(also)}))`;
    const age = (column: string): string => `(extract(epoch FROM now() - ${column}) * 1000)::bigint`;
    return `SELECT pg_catalog.pg_current_snapshot()::text AS snapshot,
  (SELECT coalesce(json_agg(json_build_array(key, region, version)), '[]') FROM ${this.directory} WHERE ${changed})::text AS entries,
  (SELECT coalesce(json_agg(json_build_array(node, home, ${age("heartbeat_at")}, sessions, pid, started_at, decision_log, authority, statements, holds) ORDER BY node), '[]') FROM ${this.peers})::text AS peers,
  (SELECT coalesce(json_agg(json_build_array(m.id::text, m.mover, m.keys, m.target, ${age("m.announced_at")}, (SELECT coalesce(json_agg(json_build_array(c.node, c.step)), '[]') FROM ${this.confirms} c WHERE c.move_id = m.id), m.step) ORDER BY m.id), '[]') FROM ${this.moves} m)::text AS moves,
  (SELECT coalesce(json_agg(x.id::text), '[]') FROM (SELECT move_id AS id FROM ${this.ended} WHERE move_id = ANY(${ids}) UNION SELECT e.move_id FROM ${this.moves} m JOIN ${this.ended} e ON e.move_id = m.id) AS x)::text AS ended`;
  }

  /** A first write's claim: the key goes to `region` unless another proxy placed it first. */
  claimSql(keys: readonly string[], region: string): string {
    return `INSERT INTO ${this.directory} (key, region, written_xid) SELECT k, ${literal(region)}, pg_catalog.pg_current_xact_id() FROM unnest(${textArray(keys)}) AS k ON CONFLICT (key) DO NOTHING`;
  }

  /** Where the claimed keys are now, read after the claim committed (a later snapshot). */
  placedSql(keys: readonly string[]): string {
    return `SELECT key, region FROM ${this.directory} WHERE key = ANY(${textArray(keys)})`;
  }

  /**
   * A move's entry where the proxies agree, inside the move's transaction: peers read it as a
   * change. `versions` holds each key's new version (one above the highest any region had).
   */
  moveSql(keys: readonly string[], region: string, versions: ReadonlyMap<string, number>): string {
    const list = `ARRAY[${keys.map((key) => versions.get(key) ?? 1).join(", ")}]::bigint[]`;
    return `INSERT INTO ${this.directory} (key, region, moved_at, written_xid, version) SELECT k, ${literal(region)}, now(), pg_catalog.pg_current_xact_id(), v FROM unnest(${textArray(keys)}, ${list}) AS u(k, v) ON CONFLICT (key) DO UPDATE SET region = EXCLUDED.region, moved_at = EXCLUDED.moved_at, written_xid = EXCLUDED.written_xid, version = EXCLUDED.version`;
  }

  /** The keys' entries with their versions in one region (a move reads them in its transaction). */
  versionsSql(keys: readonly string[]): string {
    return `SELECT key, region, version::text AS version FROM ${this.directory} WHERE key = ANY(${textArray(keys)})`;
  }

  /**
   * Entries a region that was out of reach missed, written there: a row it lacks is added, an
   * older one replaced (never a newer one). Rows as [key, region, version].
   */
  catchUpSql(rows: readonly (readonly [string, string, number])[]): string {
    const keys = textArray(rows.map((row) => row[0]));
    const regions = textArray(rows.map((row) => row[1]));
    const versions = `ARRAY[${rows.map((row) => row[2]).join(", ")}]::bigint[]`;
    return `INSERT INTO ${this.directory} AS d (key, region, moved_at, written_xid, version) SELECT k, r, now(), pg_catalog.pg_current_xact_id(), v FROM unnest(${keys}, ${regions}, ${versions}) AS u(k, r, v) ON CONFLICT (key) DO UPDATE SET region = EXCLUDED.region, moved_at = EXCLUDED.moved_at, written_xid = EXCLUDED.written_xid, version = EXCLUDED.version WHERE d.version < EXCLUDED.version`;
  }

  /**
   * Announces a move, committed before the mover looks at who must confirm it. Its keys are
   * inserted in the moving table in the same statement: while another announcement of one of
   * them stands (or commits at the same time) the insert fails with 23505 and nothing is announced.
   */
  announceSql(id: string, mover: string, keys: readonly string[], target: string): string {
    return `WITH announced AS (INSERT INTO ${this.moves} (id, mover, keys, target) VALUES (${literal(id)}::bigint, ${literal(mover)}, ${textArray(keys)}, ${literal(target)}) RETURNING id), taken AS (INSERT INTO ${this.moving} (key, move_id) SELECT k, announced.id FROM announced, unnest(${textArray(keys)}) AS k) SELECT id::text AS id, pg_catalog.pg_notify(${literal(this.channel)}, 'announced') FROM announced`;
  }

  /** Who announced the moves that have any of these keys now. */
  movingSql(keys: readonly string[]): string {
    return `SELECT m.id::text AS id, m.mover FROM ${this.moving} k JOIN ${this.moves} m ON m.id = k.move_id WHERE k.key = ANY(${textArray(keys)}) ORDER BY m.id LIMIT 1`;
  }

  /** The peers' heartbeat ages and who confirmed move `id` at `step` (or later), for the mover's wait. */
  confirmationsSql(id: string, step: MoveStep = 1): string {
    return `SELECT p.node, (extract(epoch FROM now() - p.heartbeat_at) * 1000)::bigint::text AS age_ms, EXISTS (SELECT 1 FROM ${this.confirms} c WHERE c.move_id = ${literal(id)}::bigint AND c.node = p.node AND c.step >= ${step}) AS confirmed FROM ${this.peers} p`;
  }

  /**
   * A peer's confirmation that it holds move `id`'s keys as `step` asks (1: writes; 2: reads
   * too). Written in every region it reaches, also one that missed the announcement, so that a
   * confirmation taken at a majority is one the mover's majority reads; one outliving its move is
   * removed with the next withdrawal.
   */
  confirmSql(id: string, node: string, step: MoveStep = 1): string {
    return `INSERT INTO ${this.confirms} AS c (move_id, node, step) VALUES (${literal(id)}::bigint, ${literal(node)}, ${step}) ON CONFLICT (move_id, node) DO UPDATE SET step = GREATEST(c.step, EXCLUDED.step), confirmed_at = now()`;
  }

  /** The mover's copy is done: peers are asked to hold the keys' reads too, and to confirm again. */
  stepSql(id: string, step: MoveStep): string {
    return `WITH stepped AS (UPDATE ${this.moves} SET step = GREATEST(step, ${step}) WHERE id = ${literal(id)}::bigint RETURNING id) SELECT id::text AS id, pg_catalog.pg_notify(${literal(this.channel)}, 'step') FROM stepped`;
  }

  /** Withdraws moves, with their keys and confirmations (and any a peer wrote as they went). */
  withdrawSql(ids: readonly string[]): string {
    const list = `ARRAY[${ids.map((id) => `${literal(id)}::bigint`).join(", ")}]`;
    return `DELETE FROM ${this.moving} WHERE move_id = ANY(${list}); DELETE FROM ${this.confirms} WHERE move_id = ANY(${list}); DELETE FROM ${this.moves} WHERE id = ANY(${list}); INSERT INTO ${this.ended} (move_id) SELECT unnest(${list}) ON CONFLICT DO NOTHING; DELETE FROM ${this.ended} WHERE ended_at < now() - interval '7 days'; DELETE FROM ${this.confirms} c WHERE c.move_id IN (SELECT move_id FROM ${this.ended}); SELECT pg_catalog.pg_notify(${literal(this.channel)}, 'withdrawn')`;
  }

  /** Withdraws every move `node` announced (a dead peer's, once taken over); returns their ids. */
  withdrawAllOfSql(node: string): string {
    return `WITH gone AS (DELETE FROM ${this.moves} WHERE mover = ${literal(node)} RETURNING id), keys AS (DELETE FROM ${this.moving} WHERE move_id IN (SELECT id FROM gone)), confirms AS (DELETE FROM ${this.confirms} WHERE move_id IN (SELECT id FROM gone)), marked AS (INSERT INTO ${this.ended} (move_id) SELECT id FROM gone ON CONFLICT DO NOTHING) SELECT id::text AS id, pg_catalog.pg_notify(${literal(this.channel)}, 'withdrawn') FROM gone`;
  }

  /** This node's announcements left by an earlier run (withdrawn once its moves are settled). */
  ownMovesSql(node: string): string {
    return `SELECT id::text AS id FROM ${this.moves} WHERE mover = ${literal(node)}`;
  }

  /** Whether a region has the peers table (proxies agreed there once). */
  presentSql(): string {
    return `SELECT pg_catalog.to_regclass(${literal(this.peers)}) IS NOT NULL AS present`;
  }

  /** Other proxies whose heartbeat in this region is younger than `withinMs`. */
  livePeersSql(node: string, withinMs: number): string {
    return `SELECT node, home FROM ${this.peers} WHERE node <> ${literal(node)} AND heartbeat_at > now() - ${literal(`${Math.round(withinMs)} milliseconds`)}::interval`;
  }

  /** A proxy that stops cleanly leaves the peers at once. */
  leaveSql(node: string): string {
    return `DELETE FROM ${this.peers} WHERE node = ${literal(node)}`;
  }
}

/**
 * Adds `column` to `table` when the catalog lacks it: ALTER TABLE locks the table even when
 * IF NOT EXISTS makes it do nothing, and a lock queued behind a long transaction would stop every
 * proxy's visit behind it.
 */
function addMissing(table: string, column: string, type: string): string {
  return `  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute WHERE attrelid = ${literal(table)}::regclass AND attname = ${literal(column)} AND NOT attisdropped) THEN
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${ident(column)} ${type};
  END IF;`;
}

/** Steps run in one DO block whose locks wait 2 s at most. */
function briefly(steps: readonly string[]): string {
  return `DO $geoproxy$
BEGIN
  SET LOCAL lock_timeout = '2000ms';
${steps.join("\n")}
END
$geoproxy$`;
}

/** A move's steps: 1 while it copies (peers hold writes), 2 before it commits (reads too). */
export type MoveStep = 1 | 2;

/** The xmin of a pg_snapshot's text (`xmin:xmax:xip,...`). */
export function snapshotXmin(snapshot: string): bigint {
  return BigInt(snapshot.slice(0, snapshot.indexOf(":")));
}
