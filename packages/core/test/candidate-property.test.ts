import { Analyzer } from "@geo/sql";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  MemoryDirectory,
  type Plan,
  parseConfig,
  placeKey,
  plan,
  schemaInfoFor,
  Topology,
} from "../src/index.js";

// End to end through the real analyser: SQL text generated from a random predicate, a random
// directory, random rows. Every region holding a row the predicate matches must be a candidate.
const topology = Topology.fromConfig(
  parseConfig(`
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu" }

[[topology.regions]]
id = "eu-west-2"
location = "eu-west"
primary = { host = "eu2" }

[[topology.regions]]
id = "us-east"
primary = { host = "us" }

[[topology.regions]]
id = "ap-south"
primary = { host = "ap" }

[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "orders"
placement = "geo_partitioned"
key = "tenant_id"
`),
);

type Predicate =
  | { op: "eq"; key: string }
  | { op: "in"; keys: string[] }
  | { op: "not-in"; keys: string[] }
  | { op: "other"; age: number }
  | { op: "and" | "or"; left: Predicate; right: Predicate };

interface Row {
  key: string;
  age: number;
}

const KEYS = ["alice", "bob", "chandra", "dora", "emil", "", "o'neil", "日本"];
const keyArb = fc.constantFrom(...KEYS);
const predicateArb: fc.Arbitrary<Predicate> = fc.letrec<{ p: Predicate }>((tie) => ({
  p: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ op: fc.constant("eq" as const), key: keyArb }),
    fc.record({ op: fc.constant("in" as const), keys: fc.array(keyArb, { minLength: 1, maxLength: 3 }) }),
    fc.record({ op: fc.constant("not-in" as const), keys: fc.array(keyArb, { minLength: 1, maxLength: 3 }) }),
    fc.record({ op: fc.constant("other" as const), age: fc.integer({ min: 0, max: 99 }) }),
    fc.record({ op: fc.constantFrom("and" as const, "or" as const), left: tie("p"), right: tie("p") }),
  ),
})).p;

function matches(predicate: Predicate, row: Row): boolean {
  switch (predicate.op) {
    case "eq":
      return row.key === predicate.key;
    case "in":
      return predicate.keys.includes(row.key);
    case "not-in":
      return !predicate.keys.includes(row.key);
    case "other":
      return row.age > predicate.age;
    case "and":
      return matches(predicate.left, row) && matches(predicate.right, row);
    case "or":
      return matches(predicate.left, row) || matches(predicate.right, row);
  }
}

/** SQL for a predicate; keys become literals, or parameters collected into `params`. */
function sql(predicate: Predicate, alias: string, params: string[] | undefined): string {
  const value = (key: string) => {
    if (params === undefined) return `'${key.replaceAll("'", "''")}'`;
    params.push(key);
    return `$${params.length}`;
  };
  switch (predicate.op) {
    case "eq":
      return `${alias}.tenant_id = ${value(predicate.key)}`;
    case "in":
      return `${alias}.tenant_id IN (${predicate.keys.map(value).join(", ")})`;
    case "not-in":
      return `NOT (${alias}.tenant_id IN (${predicate.keys.map(value).join(", ")}))`;
    case "other":
      return `${alias}.age > ${predicate.age}`;
    case "and":
    case "or":
      return `(${sql(predicate.left, alias, params)} ${predicate.op.toUpperCase()} ${sql(predicate.right, alias, params)})`;
  }
}

function candidates(decided: Plan): readonly string[] {
  switch (decided.kind) {
    case "single":
      return [decided.region];
    case "scatter":
    case "distributed-write":
      return decided.regions;
    default:
      throw new Error(`unexpected plan ${JSON.stringify(decided)}`);
  }
}

let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create(schemaInfoFor(topology));
});

describe("candidate regions, through the analyser", () => {
  it("always include every region that holds a matching row", () => {
    fc.assert(
      fc.property(
        fc.dictionary(keyArb, fc.constantFrom(...topology.regionIds), { maxKeys: 6 }),
        predicateArb,
        fc.array(fc.record({ key: keyArb, age: fc.integer({ min: 0, max: 99 }) }), {
          minLength: 1,
          maxLength: 10,
        }),
        fc.constantFrom("literals", "params"),
        fc.constantFrom("select", "join", "update", "delete"),
        (entries, predicate, rows, style, shape) => {
          const directory = new MemoryDirectory(Object.entries(entries));
          const params: string[] | undefined = style === "params" ? [] : undefined;
          const where = sql(predicate, "u", params);
          const text =
            shape === "select"
              ? `SELECT * FROM users u WHERE ${where}`
              : shape === "join"
                ? `SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id WHERE ${where}`
                : shape === "update"
                  ? `UPDATE users u SET age = age + 1 WHERE ${where}`
                  : `DELETE FROM users u WHERE ${where}`;
          const decided = plan(analyzer.analyze(text), {
            topology,
            directory,
            ...(params === undefined ? {} : { params }),
          });
          const regions = candidates(decided);
          for (const row of rows) {
            if (matches(predicate, row))
              expect(regions).toContain(placeKey(row.key, "text", topology, directory));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
