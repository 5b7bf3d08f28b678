import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer, type KeyConstraint, type KeyValue } from "../src/index.js";
import { KEYS, summarize } from "./summarize.js";

const KEY_DOMAIN = ["a", "b", "c", "d"] as const;
const X_DOMAIN = [1, 2, 3] as const;

type Pred =
  | { t: "eq"; v: string }
  | { t: "eqRev"; v: string }
  | { t: "param"; i: number }
  | { t: "in"; vs: string[] }
  | { t: "anyText"; vs: string[] }
  | { t: "anyArray"; vs: string[] }
  | { t: "anyParam"; i: number }
  | { t: "ne"; v: string }
  | { t: "gt"; v: string }
  | { t: "lower"; v: string }
  | { t: "x"; n: number }
  | { t: "true" }
  | { t: "not"; p: Pred }
  | { t: "and"; l: Pred; r: Pred }
  | { t: "or"; l: Pred; r: Pred };

const key = fc.constantFrom(...KEY_DOMAIN);
const keys = fc.array(key, { minLength: 1, maxLength: 3 });

const pred: fc.Arbitrary<Pred> = fc.letrec<{ p: Pred }>((tie) => ({
  p: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ t: fc.constant("eq" as const), v: key }),
    fc.record({ t: fc.constant("eqRev" as const), v: key }),
    fc.record({ t: fc.constant("param" as const), i: fc.constantFrom(1, 2) }),
    fc.record({ t: fc.constant("in" as const), vs: keys }),
    fc.record({ t: fc.constant("anyText" as const), vs: keys }),
    fc.record({ t: fc.constant("anyArray" as const), vs: keys }),
    fc.record({ t: fc.constant("anyParam" as const), i: fc.constant(3) }),
    fc.record({ t: fc.constant("ne" as const), v: key }),
    fc.record({ t: fc.constant("gt" as const), v: key }),
    fc.record({ t: fc.constant("lower" as const), v: key }),
    fc.record({ t: fc.constant("x" as const), n: fc.constantFrom(...X_DOMAIN) }),
    fc.constant({ t: "true" as const }),
    fc.record({ t: fc.constant("not" as const), p: tie("p") }),
    fc.record({ t: fc.constant("and" as const), l: tie("p"), r: tie("p") }),
    fc.record({ t: fc.constant("or" as const), l: tie("p"), r: tie("p") }),
  ),
})).p;

interface Bindings {
  readonly p1: string;
  readonly p2: string;
  readonly p3: readonly string[];
}

function sql(p: Pred, q: string): string {
  const k = `${q}tenant_id`;
  switch (p.t) {
    case "eq":
      return `${k} = '${p.v}'`;
    case "eqRev":
      return `'${p.v}' = ${k}`;
    case "param":
      return `${k} = $${p.i}`;
    case "in":
      return `${k} IN (${p.vs.map((v) => `'${v}'`).join(", ")})`;
    case "anyText":
      return `${k} = ANY('{${p.vs.join(",")}}')`;
    case "anyArray":
      return `${k} = ANY(ARRAY[${p.vs.map((v) => `'${v}'`).join(", ")}])`;
    case "anyParam":
      return `${k} = ANY($${p.i})`;
    case "ne":
      return `${k} <> '${p.v}'`;
    case "gt":
      return `${k} > '${p.v}'`;
    case "lower":
      return `lower(${k}) = '${p.v}'`;
    case "x":
      return `${q}x = ${p.n}`;
    case "true":
      return "true";
    case "not":
      return `NOT (${sql(p.p, q)})`;
    case "and":
      return `(${sql(p.l, q)} AND ${sql(p.r, q)})`;
    case "or":
      return `(${sql(p.l, q)} OR ${sql(p.r, q)})`;
  }
}

function holds(p: Pred, row: { k: string; x: number }, b: Bindings): boolean {
  switch (p.t) {
    case "eq":
    case "eqRev":
      return row.k === p.v;
    case "param":
      return row.k === (p.i === 1 ? b.p1 : b.p2);
    case "in":
    case "anyText":
    case "anyArray":
      return p.vs.includes(row.k);
    case "anyParam":
      return b.p3.includes(row.k);
    case "ne":
      return row.k !== p.v;
    case "gt":
      return row.k > p.v;
    case "lower":
      return row.k.toLowerCase() === p.v;
    case "x":
      return row.x === p.n;
    case "true":
      return true;
    case "not":
      return !holds(p.p, row, b);
    case "and":
      return holds(p.l, row, b) && holds(p.r, row, b);
    case "or":
      return holds(p.l, row, b) || holds(p.r, row, b);
  }
}

/** The keys a constraint admits once parameters are bound; undefined means every key. */
function admitted(c: KeyConstraint, b: Bindings): Set<string> | undefined {
  if (c.kind === "any") return undefined;
  const out = new Set<string>();
  const add = (v: KeyValue): void => {
    if (v.kind === "literal") out.add(v.text);
    else if (v.kind === "param") out.add(v.index === 1 ? b.p1 : b.p2);
    else for (const k of b.p3) out.add(k);
  };
  for (const v of c.values) add(v);
  return out;
}

const row = fc.record({ k: key, x: fc.constantFrom(...X_DOMAIN) });
const bindings: fc.Arbitrary<Bindings> = fc.record({ p1: key, p2: key, p3: keys });

let cached: Analyzer;
let cold: Analyzer;

beforeAll(async () => {
  cached = await Analyzer.create({ keyColumns: KEYS });
  cold = new Analyzer({ keyColumns: KEYS, cacheSize: 0 });
});

describe("the key lattice", () => {
  it("never excludes a key that a row satisfying the WHERE clause could have", () => {
    fc.assert(
      fc.property(pred, fc.array(row, { minLength: 1, maxLength: 12 }), bindings, (p, rows, b) => {
        const analysis = cached.analyze(`SELECT * FROM users WHERE ${sql(p, "")}`);
        const allowed = admitted(analysis.tables[0]!.key, b);
        for (const r of rows)
          if (holds(p, r, b) && allowed !== undefined) expect(allowed.has(r.k)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("never excludes a key of a joined row that the join and the WHERE clause let through", () => {
    fc.assert(
      fc.property(
        pred,
        fc.array(fc.tuple(row, row), { minLength: 1, maxLength: 12 }),
        bindings,
        (p, pairs, b) => {
          const analysis = cached.analyze(
            `SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id WHERE ${sql(p, "u.")}`,
          );
          const users = admitted(analysis.tables[0]!.key, b);
          const orders = admitted(analysis.tables[1]!.key, b);
          for (const [u, o] of pairs) {
            if (u.k !== o.k || !holds(p, u, b)) continue;
            if (users !== undefined) expect(users.has(u.k)).toBe(true);
            if (orders !== undefined) expect(orders.has(o.k)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never excludes a key of a row that a USING join and a WHERE on its merged column let through", () => {
    const joinType = fc.constantFrom("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN");
    const table = fc.array(row, { minLength: 0, maxLength: 6 });
    fc.assert(
      fc.property(pred, joinType, table, table, bindings, (p, type, users, orders, b) => {
        const analysis = cached.analyze(
          `SELECT * FROM users u ${type} orders o USING (tenant_id) WHERE ${sql(p, "")}`,
        );
        const allowedUsers = admitted(analysis.tables[0]!.key, b);
        const allowedOrders = admitted(analysis.tables[1]!.key, b);
        for (const [u, o] of joinedRows(type, users, orders)) {
          // The merged column is the left key, or the right one where the left row is missing.
          const merged = u ?? o!;
          if (!holds(p, merged, b)) continue;
          if (u !== undefined && allowedUsers !== undefined) expect(allowedUsers.has(u.k)).toBe(true);
          if (o !== undefined && allowedOrders !== undefined) expect(allowedOrders.has(o.k)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

type Row = { k: string; x: number };

/** The row pairs a join on the key gives, with undefined for a null-extended side. */
function joinedRows(
  type: string,
  left: readonly Row[],
  right: readonly Row[],
): [Row | undefined, Row | undefined][] {
  const out: [Row | undefined, Row | undefined][] = [];
  for (const l of left) for (const r of right) if (l.k === r.k) out.push([l, r]);
  if (type === "LEFT JOIN" || type === "FULL JOIN")
    for (const l of left) if (!right.some((r) => r.k === l.k)) out.push([l, undefined]);
  if (type === "RIGHT JOIN" || type === "FULL JOIN")
    for (const r of right) if (!left.some((l) => l.k === r.k)) out.push([undefined, r]);
  return out;
}

const text = fc.string({ maxLength: 12 }).filter((s) => !s.includes("\u0000"));
const stringLiteral = text.map((s) => `'${s.replaceAll("'", "''")}'`);
const dollarLiteral = text.filter((s) => !s.includes("$")).map((s) => `$$${s}$$`);
const integer = fc.oneof(
  fc.integer({ min: -3_000_000_000, max: 3_000_000_000 }),
  fc.integer({ min: -3, max: 3 }),
);
const numeric = fc
  .tuple(fc.integer({ min: -999, max: 999 }), fc.integer({ min: 0, max: 999 }))
  .map(([a, b]) => `${a}.${b}`);
const word = fc.stringMatching(/^[a-z]{1,6}$/);
const literal = fc.oneof(stringLiteral, dollarLiteral, integer.map(String), numeric);

const templates: fc.Arbitrary<string>[] = [
  literal.map((l) => `SELECT * FROM users WHERE tenant_id = ${l}`),
  integer.map((n) => `SELECT * FROM accounts WHERE id = ${n}`),
  integer.map((n) => `SELECT * FROM accounts WHERE id=${n}`),
  fc
    .tuple(literal, literal, integer)
    .map(([a, b, n]) => `SELECT * FROM users WHERE tenant_id IN (${a}, ${b}) AND age > ${n}`),
  fc
    .tuple(literal, literal, literal, literal)
    .map(([a, b, c, d]) => `INSERT INTO users (tenant_id, name) VALUES (${a}, ${b}), (${c}, ${d})`),
  fc.tuple(word, word).map(([a, b]) => `SELECT * FROM users WHERE tenant_id = ANY('{${a},${b}}')`),
  fc
    .tuple(literal, literal, literal)
    .map(([a, b, c]) => `UPDATE users SET name = ${a} WHERE tenant_id = ${b} OR tenant_id = ${c}`),
  fc
    .tuple(literal, literal)
    .map(([a, b]) => `SELECT * FROM users WHERE tenant_id = ${a} AND tenant_id = ${b}`),
  fc.tuple(integer, numeric).map(([a, b]) => `SELECT * FROM accounts WHERE id = ${a}::int8 OR id = ${b}`),
  fc
    .tuple(literal, fc.nat(1000))
    .map(
      ([a, n]) =>
        `SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id WHERE u.tenant_id = ${a} LIMIT ${n}`,
    ),
  fc
    .tuple(word, literal)
    .map(
      ([k, b]) => `/* geo: key=${k} */ SELECT country, count(*) FROM users WHERE tenant_id = ${b} GROUP BY 1`,
    ),
  fc.tuple(integer, literal).map(([n, b]) => `SELECT * FROM accounts WHERE id = ${n}::int8 AND name = ${b}`),
  fc
    .tuple(integer, integer)
    .map(([a, b]) => `SELECT * FROM accounts WHERE id IN (${a}, -${Math.abs(b)}, $1) -- note ${a}\n`),
  fc
    .tuple(literal, word)
    .map(([a, w]) => `/* ${w} */ SELECT * FROM users WHERE tenant_id = ${a} AND note = E'${w}\\n'`),
  fc
    .tuple(literal, integer)
    .map(
      ([a, n]) =>
        `SELECT * FROM users u WHERE u.tenant_id = ${a} AND EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id AND o.total > ${n})`,
    ),
  fc
    .tuple(literal, literal)
    .map(
      ([a, b]) => `SELECT * FROM users WHERE tenant_id = $1 OR tenant_id = ${a} OR tenant_id = ${b}::text`,
    ),
  fc
    .tuple(literal, literal)
    .map(
      ([a, b]) =>
        `SELECT * FROM users u LEFT JOIN orders o USING (tenant_id) WHERE tenant_id IN (${a}, ${b}) OR u.name = ${b}`,
    ),
];

describe("the analysis cache", () => {
  it("gives the same analysis as a cold analysis for generated literals", () => {
    fc.assert(
      fc.property(fc.oneof(...templates), (statement) => {
        expect(summarize(cached.analyze(statement))).toEqual(summarize(cold.analyzeCold(statement)));
      }),
      { numRuns: 600 },
    );
    expect(cached.stats().hits).toBeGreaterThan(100);
  });
});
