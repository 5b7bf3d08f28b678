import type { KeyLink } from "./analysis.js";

/**
 * Which key equalities tie occurrences into one region. Two occurrences are tied when, in every
 * combination of rows the statement forms, their rows (where present) have equal keys: then the
 * statement run in each region over that region's rows meets every combination one server would.
 *
 * An equality ties its two sides outright only where both rows are always present when it is
 * tested: a WHERE conjunct, the ON of an inner join between rows no outer join can null, or a
 * positive EXISTS / IN that the WHERE requires. Elsewhere tying is not transitive: in
 * `a JOIN b ON a.id = b.id LEFT JOIN c ON c.k = a.k AND c.k = b.k` pairs of a and b with unequal
 * keys are kept with c null, and under `NOT EXISTS (... c.k = a.k AND c.k = b.k)` they are the
 * very rows kept. There the equality only says which rows of the dependent side matter (those
 * with the other side's key), so a dependent group joins another group only when every such
 * equality of it leads into that one group.
 */
export type LinkOrigin =
  /** Both rows are present whenever the equality is tested. */
  | { readonly kind: "ties" }
  /** The rows of `inner` (a sub-query's, or an outer join's nullable side) matter only where they equal the other's. */
  | { readonly kind: "dependent"; readonly inner: number }
  /** An inner join whose sides an outer join may null, or a full join: tied when each side is. */
  | { readonly kind: "sides"; readonly left: readonly number[]; readonly right: readonly number[] };

export interface CandidateLink {
  readonly left: number;
  readonly right: number;
  readonly via: KeyLink["via"];
  readonly origin: LinkOrigin;
}

/** The links that tie occurrences, one per tied pair, in the order they were found. */
export function tiedLinks(occurrences: number, candidates: readonly CandidateLink[]): KeyLink[] {
  const groups = new Groups(occurrences);
  for (const c of candidates) if (c.origin.kind === "ties") groups.union(c.left, c.right);
  for (let changed = true; changed; ) {
    changed = false;
    for (const c of candidates) {
      if (c.origin.kind !== "sides") continue;
      const left = groups.single(c.origin.left);
      const right = groups.single(c.origin.right);
      if (left !== undefined && right !== undefined && groups.union(left, right)) changed = true;
    }
    // Each dependent group with every dependent equality leading into one other group joins it.
    const targets = new Map<number, Set<number>>();
    for (const c of candidates) {
      if (c.origin.kind !== "dependent") continue;
      const other = c.origin.inner === c.left ? c.right : c.left;
      const from = groups.find(c.origin.inner);
      const to = groups.find(other);
      if (from === to) continue;
      const set = targets.get(from) ?? new Set<number>();
      set.add(to);
      targets.set(from, set);
    }
    for (const [from, to] of targets) {
      if (to.size !== 1) continue;
      const [only] = to;
      if (only !== undefined && groups.union(from, only)) changed = true;
    }
  }
  const out: KeyLink[] = [];
  for (const c of candidates) {
    if (c.left === c.right || groups.find(c.left) !== groups.find(c.right)) continue;
    const [left, right] = c.left < c.right ? [c.left, c.right] : [c.right, c.left];
    if (out.some((l) => l.left === left && l.right === right)) continue;
    out.push({ left, right, via: c.via });
  }
  return out;
}

class Groups {
  private readonly parent: number[];

  constructor(size: number) {
    this.parent = Array.from({ length: size }, (_, index) => index);
  }

  find(index: number): number {
    let root = index;
    while (this.parent[root] !== undefined && this.parent[root] !== root) root = this.parent[root]!;
    return root;
  }

  /** Whether the two were apart (and now are one). */
  union(left: number, right: number): boolean {
    const a = this.find(left);
    const b = this.find(right);
    if (a === b || a >= this.parent.length || b >= this.parent.length) return false;
    this.parent[a] = b;
    return true;
  }

  /** The group all of `members` are in, if one. */
  single(members: readonly number[]): number | undefined {
    let group: number | undefined;
    for (const m of members) {
      const g = this.find(m);
      if (group !== undefined && g !== group) return undefined;
      group = g;
    }
    return group;
  }
}
