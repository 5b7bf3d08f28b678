/**
 * What the peers of a shared directory look like from one proxy: the types SHOW PEERS and the
 * admin views read, kept apart from the code that keeps them current.
 */

/** One proxy of the shared directory, as the last visit to the authority found it. */
export interface Peer {
  readonly node: string;
  readonly home: string;
  /** The heartbeat's age by the authority's clock at the last visit, plus the time since. */
  readonly heartbeatAgeMs: number;
  readonly sessions: number;
  readonly pid: number;
  readonly startedAt: string;
  /** Moves it announced that are not withdrawn. */
  readonly moves: number;
}

/** A move announced by some proxy, as a visit read it. */
export interface Announcement {
  readonly id: string;
  readonly mover: string;
  readonly keys: readonly string[];
  readonly target: string;
  readonly ageMs: number;
  readonly confirmedBy: readonly string[];
}

/** What SHOW PEERS reads: the shared directory's view as this proxy's last visit found it. */
export interface PeersView {
  readonly node: string;
  readonly authority: string;
  readonly config: { readonly leaseMs: number };
  leaseAgeMs(): number | undefined;
  peers(): readonly Peer[];
  following(): readonly Announcement[];
}
