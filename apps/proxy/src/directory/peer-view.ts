/**
 * What the peers of a shared directory look like from one proxy: the types SHOW PEERS and the
 * admin views read, and how a visit's JSON columns become them, kept apart from the code that
 * keeps them current.
 */

/** One proxy of the shared directory, as the last visit to the authority found it. */
export interface Peer {
  readonly node: string;
  readonly home: string;
  /**
   * The heartbeat's age by the authority's clock at the last visit (the youngest any region
   * answering it held, with a majority authority), plus the time since.
   */
  readonly heartbeatAgeMs: number;
  readonly sessions: number;
  readonly pid: number;
  readonly startedAt: string;
  /** Moves it announced that are not withdrawn. */
  readonly moves: number;
  /**
   * Where its statements' commit decisions are: `table:<log_table>` (in its home region) or
   * `file`; null from a proxy of an earlier version. A takeover reads only a table log it names.
   */
  readonly decisionLog?: string | null;
  /** Where it agrees: "majority" or a region id; null from a proxy of an earlier version. */
  readonly authority?: string | null;
  /** At its heartbeat: statements under way on geo-partitioned tables, and moves whose keys it held. */
  readonly statements?: number;
  readonly holds?: number;
}

/** A move announced by some proxy, as a visit read it. */
export interface Announcement {
  readonly id: string;
  readonly mover: string;
  readonly keys: readonly string[];
  readonly target: string;
  readonly ageMs: number;
  /** 1 while the mover copies (peers hold writes), 2 once it is about to commit (reads too). */
  readonly step: number;
  /** Each peer that confirmed, with the step it confirmed. */
  readonly confirmations: readonly (readonly [string, number])[];
  /** The peers that confirmed the move's current step. */
  readonly confirmedBy: readonly string[];
}

/** What SHOW PEERS reads: the shared directory's view as this proxy's last visit found it. */
export interface PeersView {
  readonly node: string;
  readonly authority: string;
  readonly config: { readonly leaseMs: number };
  leaseAgeMs(): number | undefined;
  /** Null while this proxy routes geo-partitioned tables; the refusal it gives them otherwise. */
  refusal(): unknown;
  peers(): readonly Peer[];
  following(): readonly Announcement[];
}

/** The `moves` column of a visit (SharedTables.visitSql): every move announced now. */
export function readAnnouncements(json: string | null | undefined): Announcement[] {
  return (
    JSON.parse(json ?? "[]") as [
      string,
      string,
      string[],
      string,
      number,
      [string, number][],
      number | null,
    ][]
  ).map(([id, mover, keys, target, ageMs, confirmations, step]) =>
    announcement({ id, mover, keys, target, ageMs, step: Number(step ?? 1), confirmations }),
  );
}

/** An announcement with `confirmedBy` derived from its step and confirmations. */
export function announcement(move: Omit<Announcement, "confirmedBy">): Announcement {
  const confirmedBy = move.confirmations.filter(([, step]) => step >= move.step).map(([node]) => node);
  return { ...move, confirmedBy };
}

/** The `peers` column of a visit, each with the number of `moves` it announced. */
export function readPeers(json: string | null | undefined, moves: readonly Announcement[]): Peer[] {
  const counts = new Map<string, number>();
  for (const move of moves) counts.set(move.mover, (counts.get(move.mover) ?? 0) + 1);
  return (
    JSON.parse(json ?? "[]") as [
      string,
      string,
      number,
      number,
      number,
      string,
      string | null,
      string | null,
      number | null,
      number | null,
    ][]
  ).map(
    ([node, home, heartbeatAgeMs, sessions, pid, startedAt, decisionLog, authority, statements, holds]) => ({
      node,
      home,
      heartbeatAgeMs: Number(heartbeatAgeMs),
      sessions: Number(sessions),
      pid: Number(pid),
      startedAt,
      moves: counts.get(node) ?? 0,
      decisionLog: decisionLog ?? null,
      authority: authority ?? null,
      statements: Number(statements ?? 0),
      holds: Number(holds ?? 0),
    }),
  );
}

/**
 * Live peers whose heartbeat names another authority than `authority` (a region id, or
 * "majority"), one line each: routing beside them would split the directory.
 */
export function otherAuthorities(
  peers: readonly Peer[],
  node: string,
  authority: string,
  leaseMs: number,
): string[] {
  return peers
    .filter((peer) => peer.node !== node && peer.authority != null && peer.authority !== authority)
    .filter((peer) => peer.heartbeatAgeMs < 1.5 * leaseMs)
    .map(
      (peer) =>
        `${peer.node} (homed in ${peer.home}) agrees in ${peer.authority === "majority" ? "a majority of regions" : `region ${peer.authority}`}`,
    );
}
