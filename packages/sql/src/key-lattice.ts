import type { KeyConstraint, KeyValue } from "./analysis.js";

/**
 * The key lattice. `any` is top (every key possible); a value list is the set of keys a matching
 * row may have; the empty list is bottom. Values may be symbolic ($n), so two constraints cannot
 * always be intersected exactly: then one side is kept, which is still a superset of the truth.
 */

export const ANY: KeyConstraint = Object.freeze({ kind: "any" });

export function valuesOf(values: readonly KeyValue[]): KeyConstraint {
  return { kind: "values", values: dedupe(values) };
}

export function sameValue(a: KeyValue, b: KeyValue): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "literal" && b.kind === "literal")
    return a.text === b.text && a.type === b.type && a.cast === b.cast;
  if (a.kind === "literal" || b.kind === "literal") return false;
  return a.index === b.index && a.cast === b.cast;
}

/**
 * Whether two literals may denote the same key. Canonical values (see `canonicalKeyValue`) are
 * one text per key, so equal text is equal keys. Otherwise only two literals of one lexical type
 * and cast compare as their text; across types (`5` and `5.0`, `'05'` and `5`) the key's type
 * decides, unknown here, so they may be equal.
 */
function mayBeSameKey(a: KeyValue, b: KeyValue, canonical: boolean): boolean {
  if (a.kind !== "literal" || b.kind !== "literal") return false;
  if (a.text === b.text) return true;
  return !canonical && (a.type !== b.type || a.cast !== b.cast);
}

function dedupe(values: readonly KeyValue[]): readonly KeyValue[] {
  if (values.length < 2) return values;
  const out: KeyValue[] = [];
  for (const v of values) {
    if (!out.some((o) => sameValue(o, v))) out.push(v);
  }
  return out;
}

function allLiteral(c: { readonly values: readonly KeyValue[] }): boolean {
  return c.values.every((v) => v.kind === "literal");
}

/**
 * AND: both hold, so the key is in both sets (`canonical`: the literals are canonical key values). `onInexact` is told when symbolic values made the
 * result a superset of the true intersection (the shape cache must not generalise such a result).
 */
export function meet(
  a: KeyConstraint,
  b: KeyConstraint,
  onInexact?: () => void,
  canonical = false,
): KeyConstraint {
  if (a.kind === "any") return b;
  if (b.kind === "any") return a;
  if (allLiteral(a) && allLiteral(b)) {
    // Kept: every value of `a` that may equal one of `b` (a superset when they are not canonical).
    return {
      kind: "values",
      values: a.values.filter((v) => b.values.some((w) => mayBeSameKey(v, w, canonical))),
    };
  }
  // The same symbolic set on both sides intersects to itself.
  if (a.values.length === b.values.length && a.values.every((v) => b.values.some((w) => sameValue(v, w))))
    return a;
  // A symbolic side cannot be intersected before Bind; either side alone over-approximates.
  onInexact?.();
  if (allLiteral(b) && !allLiteral(a)) return b;
  if (allLiteral(a) && !allLiteral(b)) return a;
  return b.values.length < a.values.length ? b : a;
}

/** OR: either holds, so the key is in the union; unconstrained if either side is. */
export function join(a: KeyConstraint, b: KeyConstraint): KeyConstraint {
  if (a.kind === "any" || b.kind === "any") return ANY;
  return valuesOf([...a.values, ...b.values]);
}

export function equalConstraints(a: KeyConstraint, b: KeyConstraint): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "any" || b.kind === "any") return true;
  if (a.values.length !== b.values.length) return false;
  return a.values.every((v, i) => {
    const w = b.values[i];
    return w !== undefined && sameValue(v, w);
  });
}

/**
 * Parses PostgreSQL's array literal text (`{a,"b c",NULL}`) into its elements; undefined when it
 * is not a one-dimensional array literal this reader is sure about.
 */
export function parseArrayLiteral(text: string): string[] | undefined {
  const s = text.trim();
  if (s.length < 2 || s[0] !== "{" || s[s.length - 1] !== "}") return undefined;
  const out: string[] = [];
  let i = 1;
  const end = s.length - 1;
  if (s.slice(1, end).trim().length === 0) return out;
  while (i <= end) {
    while (i < end && /\s/.test(s[i] ?? "")) i++;
    let item = "";
    if (s[i] === '"') {
      i++;
      while (i < end && s[i] !== '"') {
        if (s[i] === "\\") i++;
        item += s[i] ?? "";
        i++;
      }
      if (s[i] !== '"') return undefined;
      i++;
      while (i < end && /\s/.test(s[i] ?? "")) i++;
    } else {
      let raw = "";
      while (i < end && s[i] !== ",") {
        const ch = s[i] ?? "";
        if (ch === "{" || ch === "}" || ch === '"' || ch === "\\") return undefined;
        raw += ch;
        i++;
      }
      item = raw.trim();
      // NULL elements match no key; an empty unquoted element is malformed.
      if (item.length === 0) return undefined;
      if (item.toUpperCase() === "NULL") {
        if (s[i] === ",") {
          i++;
          continue;
        }
        break;
      }
    }
    out.push(item);
    if (s[i] === ",") {
      i++;
      continue;
    }
    if (i !== end) return undefined;
    break;
  }
  return out;
}
