import type { Fact } from "../observability/alert-book.js";
import type { Announcement } from "./peer-view.js";

/** What the alerts of a shared directory are read from. */
export interface SharedFactsSource {
  /** "majority", or the authority region's id: the alerts' subject. */
  readonly authority: string;
  /** Where the proxies agree, as messages name it (Quorum.where). */
  readonly where: string;
  readonly leaseMs: number;
  readonly holdMs: number;
  /** Live proxies agreeing elsewhere, one line each. */
  readonly elsewhere: readonly string[];
  /** Milliseconds since the last visit that got through was sent; undefined before the first. */
  readonly leaseAgeMs: number | undefined;
  /** The moves announced, as the last visit found them, and how long ago that was. */
  readonly announcements: readonly Announcement[];
  readonly sinceVisitMs: number;
}

/**
 * `directory_split` while live proxies agree elsewhere, `directory_unreachable` while the lease
 * has lapsed (subject the authority), and `move_stalled` for each announced move older than twice
 * hold_ms (subject the move's id): its keys are held.
 */
export function sharedFacts(source: SharedFactsSource): Fact[] {
  const facts: Fact[] = [];
  if (source.elsewhere.length > 0)
    facts.push({
      name: "directory_split",
      subject: source.authority,
      message: `this proxy agrees in ${source.where}, while ${source.elsewhere.join("; ")}: statements on geo-partitioned tables are refused (55000); set the same [directory_store] authority in every proxy`,
    });
  const age = source.leaseAgeMs;
  if (age === undefined || age >= source.leaseMs)
    facts.push({
      name: "directory_unreachable",
      subject: source.authority,
      message:
        age === undefined
          ? `the shared directory's authority (${source.where}) has not answered since this proxy started: statements on geo-partitioned tables are refused (57P03)`
          : `the shared directory's authority (${source.where}) last answered ${Math.round(age)} ms ago, past lease_ms: statements on geo-partitioned tables are refused (57P03)`,
    });
  for (const move of source.announcements) {
    const ageMs = move.ageMs + source.sinceVisitMs;
    if (ageMs < 2 * source.holdMs) continue;
    facts.push({
      name: "move_stalled",
      subject: `move ${move.id}`,
      message: `proxy ${move.mover} announced a move of ${move.keys.length} key(s) to ${move.target} ${Math.round(ageMs / 1000)} s ago and has not withdrawn it: statements on those keys wait and then get 40001; restart ${move.mover} (it withdraws its moves once settled)`,
    });
  }
  return facts;
}
