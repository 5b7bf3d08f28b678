/**
 * Analysis speed: cold (PostgreSQL's parser every time) and through the shape cache.
 * Run: pnpm --filter @geo/sql run bench   (or: pnpm exec tsx bench/analyze.ts)
 * Prints figures; asserts nothing.
 */
import { Analyzer } from "../src/index.js";

const keyColumns = new Map([
  ["users", "tenant_id"],
  ["orders", "tenant_id"],
]);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * Median time per call in µs, over `rounds` batches of `batch` calls. `prepare` runs untimed before
 * each batch (to build the batch's fresh texts, as a socket would hand them over).
 */
function measure(
  batch: number,
  rounds: number,
  run: (i: number) => void,
  prepare?: (round: number) => void,
): number {
  for (let w = 0; w < 5; w++) {
    prepare?.(-1 - w);
    for (let i = 0; i < batch; i++) run(i);
  }
  const perCall: number[] = [];
  for (let r = 0; r < rounds; r++) {
    prepare?.(r);
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) run(i);
    perCall.push(Number(process.hrtime.bigint() - start) / 1000 / batch);
  }
  return median(perCall);
}

/** Fresh, flat texts for one batch: never seen by the analyzer before. */
function freshBatch(
  size: number,
  make: (n: number) => string,
): { texts: string[]; prepare: (round: number) => void } {
  const texts: string[] = new Array(size).fill("");
  return {
    texts,
    prepare: (round) => {
      for (let i = 0; i < size; i++)
        texts[i] = make((round + 10) * size + i)
          .split("")
          .join("");
    },
  };
}

function report(name: string, micros: number): void {
  const shown = micros < 10 ? `${(micros * 1000).toFixed(0)} ns` : `${micros.toFixed(1)} µs`;
  console.log(`${name.padEnd(52)} ${shown.padStart(10)}`);
}

const analyzer = await Analyzer.create({ keyColumns });
const point = "SELECT * FROM users WHERE tenant_id = 'alice'";
const join =
  "SELECT u.name, count(*) FROM users u JOIN orders o ON o.tenant_id = u.tenant_id WHERE u.tenant_id IN ('alice', 'bob') AND o.total > 10 GROUP BY u.name ORDER BY 2 DESC LIMIT 20";
const insertWith = (prefix: string): string =>
  `INSERT INTO users (tenant_id, name, age) VALUES ${Array.from({ length: 10 }, (_, i) => `('${prefix}${i}', 'name ${i}', ${i})`).join(", ")}`;
const insert = insertWith("tenant_");
const distinct = Array.from({ length: 256 }, (_, i) => `SELECT * FROM users WHERE tenant_id = 'user_${i}'`);
const inserts = Array.from({ length: 256 }, (_, i) => insertWith(`t${i}_`));

console.log(`@geo/sql analysis, Node ${process.version}, median per call`);
report(
  "cold analysis, point read",
  measure(50, 40, () => analyzer.analyzeCold(point)),
);
report(
  "cold analysis, join + group + order",
  measure(20, 40, () => analyzer.analyzeCold(join)),
);
report(
  "cold analysis, 10-row INSERT",
  measure(20, 40, () => analyzer.analyzeCold(insert)),
);
// Texts never seen before (so only the shape cache can answer): the cost an application that
// inlines a new literal in every statement pays.
const freshPoints = freshBatch(1000, (n) => `SELECT * FROM users WHERE tenant_id = 'user_${n}'`);
const freshInserts = freshBatch(200, (n) => insertWith(`u${n}_`));
const freshJoins = freshBatch(200, (n) => join.replace("'bob'", `'bob_${n}'`));
report(
  "cached, point read, same text",
  measure(2000, 200, () => analyzer.analyze(point)),
);
report(
  "cached, point read with $1",
  measure(2000, 200, () => analyzer.analyze("SELECT * FROM users WHERE tenant_id = $1")),
);
report(
  "cached, point read, 256 distinct inlined literals",
  measure(2048, 200, (i) => analyzer.analyze(distinct[i & 255] as string)),
);
report(
  "cached by shape, point read, every literal new",
  measure(1000, 200, (i) => analyzer.analyze(freshPoints.texts[i] as string), freshPoints.prepare),
);
report(
  "cached by shape, join + group + order, literal new",
  measure(200, 100, (i) => analyzer.analyze(freshJoins.texts[i] as string), freshJoins.prepare),
);
report(
  "cached, 10-row INSERT, 256 distinct literal sets",
  measure(512, 100, (i) => analyzer.analyze(inserts[i & 255] as string)),
);
report(
  "cached by shape, 10-row INSERT, literals new",
  measure(200, 100, (i) => analyzer.analyze(freshInserts.texts[i] as string), freshInserts.prepare),
);
const multi = analyzer.analyze(insert);
report(
  "split of a 10-row INSERT into two groups",
  measure(20, 40, () => multi.insert?.split([0, 2, 4, 6, 8])),
);
report(
  "merge plan of an ordered multi-region read (cold)",
  measure(20, 40, () => analyzer.analyzeCold(join).merge),
);
const stats = analyzer.stats();
console.log(
  `cache: ${stats.hits} hits, ${stats.misses} misses, ${stats.size} entries, ${stats.uncacheable} uncacheable`,
);
