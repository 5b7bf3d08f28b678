import { Draw } from "./draw.js";
import { aggregate } from "./families/aggregate.js";
import { distinct } from "./families/distinct.js";
import type { FamilyGenerator } from "./families/family.js";
import { groupBy } from "./families/group-by.js";
import { joinOffKey } from "./families/join-off-key.js";
import { joinOnKey } from "./families/join-on-key.js";
import { keyLookup } from "./families/key-lookup.js";
import { setOperation } from "./families/set-operation.js";
import { subquery } from "./families/subquery.js";
import { windowFunction } from "./families/window.js";
import { writeRollback } from "./families/write-rollback.js";
import { Prng } from "./prng.js";
import { FAMILIES, type Family, type OracleStatement } from "./statement.js";

const GENERATORS: Record<Family, FamilyGenerator> = {
  "key-lookup": keyLookup,
  aggregate,
  "group-by": groupBy,
  "join-on-key": joinOnKey,
  "join-off-key": joinOffKey,
  subquery,
  distinct,
  "set-operation": setOperation,
  window: windowFunction,
  "write-rollback": writeRollback,
};

/**
 * The statement at `index` for `seed`: the family comes round in turn (so any ten consecutive
 * indices cover every family), everything else from a generator seeded by (seed, index) alone.
 * The same pair gives the same statement whatever else was generated before.
 *
 * @example
 * generateStatement(1, 42).steps[0]!.sql // always the same text
 */
export function generateStatement(seed: number, index: number): OracleStatement {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`index must be a non-negative integer`);
  const family = FAMILIES[index % FAMILIES.length]!;
  const drawn = GENERATORS[family](new Draw(Prng.forStatement(seed, index)));
  return { seed, index, family, shape: drawn.shape, steps: drawn.steps };
}

/** Statements `start` .. `start + count - 1` for `seed`. */
export function generateStatements(seed: number, count: number, start = 0): OracleStatement[] {
  return Array.from({ length: count }, (_, offset) => generateStatement(seed, start + offset));
}
